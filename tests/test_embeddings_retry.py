"""Backoff, batching and cache rules shared by the hosted providers (pure functions, no I/O)."""

from __future__ import annotations

import numpy as np
import pytest

from app.embeddings.base import Vector
from app.embeddings.cache import QueryCache
from app.embeddings.retry import RetryPolicy, parse_retry_after
from app.embeddings.vectors import batch_bounds


def test_backoff_doubles_with_jitter_and_never_exceeds_the_cap() -> None:
    policy = RetryPolicy(max_retries=10, backoff_s=0.5, max_backoff_s=4.0)
    for retry, step in enumerate([0.5, 1.0, 2.0, 4.0, 4.0, 4.0]):
        delays = [policy.delay(retry, None) for _ in range(50)]
        assert all(step / 2 <= d <= step for d in delays)


def test_retry_after_is_honoured_up_to_the_cap() -> None:
    policy = RetryPolicy(max_retries=3, backoff_s=0.1, max_backoff_s=5.0)
    assert 3.0 <= policy.delay(0, 3.0) <= 3.0
    assert policy.delay(0, 3600.0) == 5.0
    assert (parse_retry_after("2"), parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT")) == (2.0, None)


def test_batches_split_on_count_and_size_and_a_huge_text_goes_alone() -> None:
    texts = ["a" * 10] * 5 + ["b" * 500] + ["c" * 10] * 2
    assert batch_bounds(texts, max_items=3, max_chars=100) == [(0, 3), (3, 5), (5, 6), (6, 8)]
    assert batch_bounds([], max_items=3, max_chars=100) == []


@pytest.mark.parametrize("size", [0, 2])
async def test_query_cache_keeps_the_most_recently_used(size: int) -> None:
    calls: list[str] = []

    async def compute(text: str) -> Vector:
        calls.append(text)
        return np.zeros(2, dtype=np.float32)

    cache = QueryCache(size)
    for text in ["a", "b", "a", "c", "a", "b"]:
        await cache.get_or_compute(text, compute)
    assert calls == (["a", "b", "a", "c", "a", "b"] if size == 0 else ["a", "b", "c", "b"])
    assert len(cache) == size
