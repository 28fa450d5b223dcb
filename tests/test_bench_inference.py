"""`memoria bench inference`'s core on a tiny corpus, in-process: the report's shape, no figures.

What the figures are is the benchmark's job (and the README's); here: every round is timed for each
of the three queries, A never gets B's memories back, the id trials report what A saw, and the
statistics say "different" for clearly shifted samples and "same" for identical ones.
"""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from memoria_bench.inference import InferenceOptions, Tenant, probe
from memoria_bench.inference.options import ABSENT, CONTROL, WORD
from memoria_bench.inference.run import corpora
from memoria_bench.inference.stats import compare, permutation_p

TINY = InferenceOptions(
    others_memories=30, own_memories=12, rounds=6, warmup_rounds=1, id_trials=(2, 5), permutations=200
)


async def test_the_probe_reports_timings_per_query_and_the_ids_a_tenant_sees(
    client: AsyncTestClient[Litestar], alice: dict[str, str], bob: dict[str, str], conn: asyncpg.Connection
) -> None:
    others = [f"Deploy note {i}: the {WORD} rollout is on hold." for i in range(TINY.others_memories)]
    own = [
        f"My own note {i}: the staging database is refreshed on Sundays." for i in range(TINY.own_memories)
    ]
    analyzed: list[bool] = []

    async def analyze() -> None:
        await conn.execute("ANALYZE memories")
        analyzed.append(True)

    report = await probe(client, Tenant("alice", alice), Tenant("bob", bob), others, own, TINY, analyze)

    assert analyzed == [True]
    assert report["setup"]["others_memories"] == 30 and report["setup"]["own_memories"] == 12
    timing = report["timing"]
    assert {kind: len(values) for kind, values in timing["samples_ms"].items()} == {
        "present": 6,
        "absent": 6,
        "control": 6,
    }
    assert all(ms > 0 for values in timing["samples_ms"].values() for ms in values)
    assert timing["leaked"] == 0  # the channel is timing only: B's memories never come back to A
    for name in ("word_vs_absent", "absent_vs_control"):
        result = timing[name]
        assert set(result) == {"a", "b", "median_difference_ms", "iqr_overlap", "p_value", "p_method"}
        assert result["a"]["q1"] <= result["a"]["median"] <= result["a"]["q3"]
        assert 0 < result["p_value"] <= 1 and isinstance(result["iqr_overlap"], bool)
    trials = report["ids"]["trials"]
    assert [t["others_stored"] for t in trials] == [2, 5]
    assert all(t["first_id"] is not None and t["second_id"] is not None for t in trials)
    assert isinstance(report["ids"]["reveals_others_activity"], bool)
    counted = await conn.fetchval(
        "SELECT count(*) FROM memories m JOIN namespaces n ON n.id = m.namespace_id "
        "JOIN users u ON u.id = n.user_id WHERE u.name = 'bob'"
    )
    assert counted == 30 + 2 + 5


async def test_the_probe_refuses_a_prober_corpus_holding_the_probe_words(
    client: AsyncTestClient[Litestar], alice: dict[str, str], bob: dict[str, str]
) -> None:
    with pytest.raises(ValueError, match="must not hold the probe words"):
        await probe(client, Tenant("a", alice), Tenant("b", bob), [], [f"about {ABSENT}"], TINY)


def test_the_corpora_put_the_word_in_every_memory_of_the_other_tenant_only(tmp_path: Path) -> None:
    sentences = tmp_path / "sentences.txt"
    sentences.write_text("\n".join(f"I have {i} cats and a garden in town number {i}." for i in range(400)))
    options = InferenceOptions(others_memories=50, own_memories=20, sentences=sentences)
    others, own = corpora(sentences, options)
    assert len(others) == 50 and len(own) == 20
    assert all(WORD in text for text in others)
    assert not any(word in text for text in own for word in (WORD, ABSENT, CONTROL))


def test_shifted_samples_differ_and_identical_ones_do_not() -> None:
    slow = [6.0 + 0.01 * i for i in range(40)]
    fast = [5.0 + 0.01 * i for i in range(40)]
    shifted = compare(slow, fast, permutations=500, seed=1)
    assert not shifted["iqr_overlap"] and shifted["p_value"] < 0.001
    assert shifted["median_difference_ms"] == pytest.approx(1.0)
    same = compare(fast, list(fast), permutations=500, seed=1)
    assert same["iqr_overlap"] and same["p_value"] > 0.5
    # the fallback when scipy is missing agrees
    assert permutation_p(slow, fast, 500, seed=1) < 0.01
    assert permutation_p(fast, list(fast), 500, seed=1) > 0.5
