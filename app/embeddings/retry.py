"""Bounded retries with exponential backoff for hosted providers (429, 5xx, timeouts, resets)."""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import anyio

from app.embeddings.base import EmbeddingError
from app.embeddings.settings import EmbeddingSettings

T = TypeVar("T")
log = logging.getLogger(__name__)


class TransientEmbeddingError(EmbeddingError):
    """A failure worth retrying; `retry_after` is the server's hint in seconds, when it gave one."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_retries: int
    backoff_s: float
    max_backoff_s: float

    @classmethod
    def from_settings(cls, settings: EmbeddingSettings) -> RetryPolicy:
        return cls(settings.max_retries, settings.retry_backoff_s, settings.retry_max_backoff_s)

    def delay(self, retry: int, retry_after: float | None) -> float:
        """Jittered doubling, never above the cap, honouring a (capped) Retry-After."""
        step = min(self.max_backoff_s, self.backoff_s * 2**retry)
        delay = random.uniform(step / 2, step)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.max_backoff_s))
        return delay


def parse_retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:  # an HTTP date: not worth parsing, the backoff covers it
        return None


async def with_retries(policy: RetryPolicy, call: Callable[[], Awaitable[T]]) -> T:
    """Run `call`; retry transient failures at most `policy.max_retries` times, then give up."""
    retry = 0
    while True:
        try:
            return await call()
        except TransientEmbeddingError as exc:
            if retry >= policy.max_retries:
                raise EmbeddingError(f"gave up after {retry + 1} attempts: {exc}") from exc
            delay = policy.delay(retry, exc.retry_after)
            log.info("embedding request failed (%s); retry %d in %.2fs", exc, retry + 1, delay)
            await anyio.sleep(delay)
            retry += 1
