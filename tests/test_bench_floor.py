"""`memoria bench quality --floor`: the hook's relevance floor scored on a benchmark's questions
(with against without, paired) and on unrelated prompts, for the configured floor and a sweep."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from app.auth.service import create_user
from app.db import create_database
from app.embeddings import LocalEmbedder
from app.hooks.floor import RelevanceFloor
from app.recall.schemas import HitExplanation, RecallHit
from app.settings import HookSettings, Settings
from memoria_bench.config import BenchConfig
from memoria_bench.floor import (
    Asked,
    bench_floor,
    evaluate,
    floored_metrics,
    hook_candidates,
    left_alone,
    parse_floors,
    print_floor_report,
)
from memoria_bench.quality import Benchmark, Query
from memoria_bench.unrelated_prompts import UNRELATED_PROMPTS
from tests.test_bench_quality import write_locomo


def hit(memory_id: int, distance: float) -> RecallHit:
    return RecallHit(
        id=memory_id,
        namespace="ns",
        content="c",
        category=None,
        tags=[],
        importance=0.5,
        is_sensitive=False,
        created_at=datetime.now(UTC),
        score=0.03,
        explain=HitExplanation(
            kind="memory",
            lexical_rank=None,
            dense_rank=1,
            graph_rank=None,
            graph_path=None,
            lexical_score=None,
            dense_distance=distance,
            fused_score=0.03,
            final_score=0.03,
        ),
    )


def two_questions() -> tuple[Benchmark, list[Asked]]:
    queries = [Query(f"q{i}", "ns", "text", "single-hop", frozenset({f"d{i}"})) for i in range(2)]
    asked = [
        Asked([frozenset({"d0"}), frozenset({"x"})], [hit(1, 0.4), hit(2, 0.9)]),  # similarity 0.6
        Asked([frozenset({"x"}), frozenset({"d1"})], [hit(3, 0.85), hit(4, 0.9)]),  # similarity 0.15
    ]
    return Benchmark(rows=[], queries=queries), asked


def test_a_question_below_the_floor_finds_nothing_and_one_above_keeps_its_ranking() -> None:
    benchmark, asked = two_questions()
    kept, dropped = floored_metrics(benchmark, asked, RelevanceFloor(0.3, None))
    assert (kept["recall@10"], kept["recall@1"], kept["mrr"]) == (1.0, 1.0, 1.0)
    assert (dropped["recall@10"], dropped["recall@1"], dropped["mrr"]) == (0.0, 0.0, 0.0)
    _, unfloored = floored_metrics(benchmark, asked, RelevanceFloor(None, None))
    assert (unfloored["recall@10"], unfloored["recall@1"], unfloored["mrr"]) == (1.0, 0.0, 0.5)


def test_the_floors_figures_pair_each_question_with_and_without_it() -> None:
    benchmark, asked = two_questions()
    unrelated: list[Asked | None] = [Asked([], [hit(5, 0.95)]), Asked([], [hit(6, 0.5)]), None]
    figures = evaluate(benchmark, asked, unrelated, RelevanceFloor(0.3, None))
    assert figures["questions"]["recall@10"]["without"] == 1.0
    assert figures["questions"]["recall@10"]["with"] == 0.5
    assert figures["questions_left_alone"] == 1
    # the far one and the trivial one (None: the hook never recalls) are left alone
    assert (figures["unrelated_left_alone"], figures["unrelated_without_floor_left_alone"]) == (2, 1)
    assert left_alone(unrelated, RelevanceFloor(0.6, None)) == 3


def test_a_sweep_names_a_similarity_a_lexical_score_or_both() -> None:
    assert parse_floors("0.25, 0.3/0.1,-/0.2") == [
        RelevanceFloor(0.25, None),
        RelevanceFloor(0.3, 0.1),
        RelevanceFloor(None, 0.2),
    ]
    assert parse_floors("") == []
    with pytest.raises(ValueError, match="not a floor"):
        parse_floors("high")


def test_the_unrelated_prompts_are_about_forty_distinct_questions_none_trivial() -> None:
    from app.hooks.policy import judge

    assert len(set(UNRELATED_PROMPTS)) == len(UNRELATED_PROMPTS) >= 40
    assert all(judge(prompt, HookSettings().min_prompt_chars).query for prompt in UNRELATED_PROMPTS)


def test_the_bench_recalls_as_many_candidates_as_the_hook(settings: Settings) -> None:
    config = BenchConfig(
        settings.database, settings.memories, settings.recall, settings.graph, HookSettings(max_results=5)
    )
    assert hook_candidates(config) == 15


async def test_the_configured_floor_and_a_sweep_are_scored_and_printed(
    tmp_path: Path, settings: Settings, embedder: LocalEmbedder, conn: Any
) -> None:
    data = write_locomo(tmp_path / "locomo")
    user_id = await create_user(conn, "bench")
    config = BenchConfig(settings.database, settings.memories, settings.recall, settings.graph)
    db = await create_database(settings.database.url or "", settings.database)
    try:
        report = await bench_floor(
            config,
            embedder,
            db,
            user_id,
            data,
            "facts",
            sweep=[RelevanceFloor(None, None), RelevanceFloor(0.99, None)],
            prompts=UNRELATED_PROMPTS[:3],
        )
    finally:
        await db.close()
    assert (report["queries"], report["unrelated_prompts"]) == (3, 6)  # 3 prompts in each of 2 namespaces
    off, impossible = report["sweep"]
    assert off["questions"]["recall@10"]["with"] == off["questions"]["recall@10"]["without"]
    assert (off["unrelated_left_alone"], impossible["unrelated_left_alone"]) == (0, 6)
    assert impossible["questions_left_alone"] == 3 and impossible["questions"]["recall@10"]["with"] == 0.0
    assert report["configured"]["min_similarity"] == HookSettings().min_similarity
    assert len(report["signals"]["questions"]) == 3
    console = Console(file=io.StringIO(), width=300)
    print_floor_report(report, console)
    printed = console.file.getvalue()  # type: ignore[attr-defined]
    assert "configured sim>=" in printed and "sim>=0.99" in printed and "off" in printed


def test_a_sweep_that_is_not_a_list_of_floors_is_a_usage_error(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from memoria_bench.cli.recall import quality

    data = write_locomo(tmp_path / "locomo")
    result = CliRunner().invoke(quality, ["--data", str(data), "--floor", "--floor-sweep", "high"])
    assert result.exit_code == 2 and "not a floor" in result.output
