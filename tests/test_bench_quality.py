"""`memoria bench quality`: a LoCoMo-format folder read, loaded through the store path and scored in
every recall mode, with paired CIs for every stratum the queries carry."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from rich.console import Console

from app.auth.service import create_user
from app.db import create_database
from app.embeddings import LocalEmbedder
from app.settings import Settings
from memoria_bench.cli import bench
from memoria_bench.config import BenchConfig
from memoria_bench.modes import MODE_WEIGHTS
from memoria_bench.quality import (
    PER_QUERY,
    Benchmark,
    Query,
    bench_quality,
    fit_content_limit,
    pair_name,
    print_report,
    query_metrics,
    read_benchmark,
    summarise,
)

ROWS = [
    ("f1", "conv-a", "Caroline adopted a grey cat named Pixel last spring."),
    ("f2", "conv-a", "Caroline works as a nurse at the city hospital."),
    ("f3", "conv-a", "Melanie paints landscapes of the coast on weekends."),
    ("f4", "conv-b", "Jon opened a dance studio downtown in 2022."),
    ("f5", "conv-b", "Jon's sister Gina moved to Denver for a job."),
]
QUERIES = [
    ("q1", "conv-a", "What pet does Caroline have?", "single-hop", ["f1"]),
    ("q2", "conv-a", "What does Melanie paint?", "temporal", ["f3"]),
    ("q3", "conv-b", "Where did Jon's sister move?", "single-hop", ["f5"]),
    ("q4", "conv-b", "A question without evidence", "temporal", []),
]


def write_locomo(folder: Path) -> Path:
    folder.mkdir()
    lines: dict[str, list[dict[str, Any]]] = {
        "facts.jsonl": [{"id": i, "namespace": ns, "content": c} for i, ns, c in ROWS],
        "queries.jsonl": [
            {"query_id": q, "namespace": ns, "text": t, "stratum": s} for q, ns, t, s, _ in QUERIES
        ],
        "qrels_facts.jsonl": [{"query_id": q, "relevant_ids": rel} for q, _, _, _, rel in QUERIES],
    }
    for name, rows in lines.items():
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


def test_queries_without_evidence_in_the_corpus_are_left_out(tmp_path: Path) -> None:
    benchmark = read_benchmark(write_locomo(tmp_path / "locomo"), "facts")
    assert len(benchmark.rows) == 5
    assert [q.query_id for q in benchmark.queries] == ["q1", "q2", "q3"]
    assert benchmark.queries[0].relevant == frozenset({"f1"})


def test_metrics_count_a_memory_holding_several_documents_once_per_document() -> None:
    metrics = query_metrics([frozenset({"x"}), frozenset({"a", "b"})], frozenset({"a", "b"}))
    assert metrics["recall@5"] == 1.0 and metrics["mrr"] == 0.5


def test_session_recall_counts_a_hit_from_any_evidence_session_of_the_same_namespace() -> None:
    session_of = {"a1": "ns-a/s1", "a2": "ns-a/s2", "b1": "ns-b/s1", "a3": "ns-a/s1"}
    relevant = frozenset({"a1", "a2"})
    assert query_metrics([frozenset({"a3"})], relevant, session_of)["session@10"] == 1.0
    # the same session name in another namespace is another session
    assert query_metrics([frozenset({"b1"})], relevant, session_of)["session@10"] == 0.0
    assert (
        query_metrics([frozenset({"x"})] * 10 + [frozenset({"a3"})], relevant, session_of)["session@10"]
        == 0.0
    )


def test_rows_without_a_session_answer_no_query_at_session_level() -> None:
    rows = [{"id": "a", "namespace": "ns"}, {"id": "b", "namespace": "ns", "session": "s1"}]
    session_of = Benchmark(rows=rows, queries=[]).session_of()
    assert session_of == {"b": "ns/s1"}
    assert query_metrics([frozenset({"a"})], frozenset({"a"}), session_of)["session@10"] == 0.0


def test_a_corpus_longer_than_the_content_limit_is_loaded_whole(tmp_path: Path, settings: Settings) -> None:
    config = BenchConfig(settings.database, settings.memories, settings.recall, settings.graph)
    long_row = {"id": "l1", "namespace": "ns", "content": "x" * (settings.memories.max_content_chars + 5)}
    fitted = fit_content_limit(config, Benchmark(rows=[long_row], queries=[]))
    assert fitted.memories.max_content_chars == settings.memories.max_content_chars + 5
    assert fit_content_limit(config, Benchmark(rows=[], queries=[])) is config


def test_paired_intervals_cover_every_stratum_the_queries_carry() -> None:
    queries = [Query(f"q{i}", "ns", "text", stratum, frozenset({"d"})) for i, stratum in enumerate("abcab")]
    benchmark = Benchmark(rows=[], queries=queries)
    row = {"recall@1": 1.0, "recall@5": 1.0, "recall@10": 1.0, "ndcg@10": 1.0, "mrr": 1.0, "session@10": 1.0}
    per_system = {"lexical+dense": [row] * 5, "all@graph=2": [{**row, "recall@10": 0.0, "mrr": 0.5}] * 5}
    report = summarise(benchmark, per_system, "facts", [("all@graph=2", "lexical+dense")])
    paired = report["paired_ci"][pair_name("all@graph=2", "lexical+dense")]
    assert set(paired["by_stratum"]) == {"a", "b", "c"}
    assert paired["overall"] == {"recall@10": [-1.0, -1.0], "recall@1": [0.0, 0.0], "mrr": [-0.5, -0.5]}


def test_the_report_keeps_every_systems_per_query_figures_in_query_order() -> None:
    queries = [Query(f"q{i}", "ns", "text", "s", frozenset({"d"})) for i in range(3)]
    rows = [
        {"recall@1": r1, "recall@5": 1.0, "recall@10": 1.0, "ndcg@10": 1.0, "mrr": mrr, "session@10": 1.0}
        for r1, mrr in ((1.0, 1.0), (0.0, 0.5), (0.0, 0.25))
    ]
    report = summarise(Benchmark(rows=[], queries=queries), {"all": rows}, "turns", [])
    per_query = report[PER_QUERY]
    assert [q["query_id"] for q in per_query["queries"]] == ["q0", "q1", "q2"]
    assert per_query["metrics"] == ["recall@10", "recall@1", "mrr"]
    assert per_query["systems"]["all"] == [[1.0, 1.0, 1.0], [1.0, 0.0, 0.5], [1.0, 0.0, 0.25]]


async def test_every_mode_is_scored_and_printed_under_one_name_each(
    tmp_path: Path, settings: Settings, embedder: LocalEmbedder, conn: Any
) -> None:
    data = write_locomo(tmp_path / "locomo")
    user_id = await create_user(conn, "bench")
    config = BenchConfig(settings.database, settings.memories, settings.recall, settings.graph)
    db = await create_database(settings.database.url or "", settings.database)
    try:
        report = await bench_quality(
            config, embedder, db, user_id, data, "facts", graph_weights=(0.5,), leg_depths=(1,)
        )
    finally:
        await db.close()
    flipped = "all@shapes=off" if settings.recall.query_shapes else "all@shapes=on"
    idf = "no-idf" if settings.recall.lexical_idf else "idf"
    assert list(report["systems"]) == [
        *MODE_WEIGHTS,
        "all@graph=0.5",
        "all+rerank",
        "all@fusion=scores",
        flipped,
        f"lexical@{idf}",
        f"all@{idf}",
        "all@depth=1",
    ]
    assert list(report["paired_ci"]) == [
        "lexical+dense - lexical",
        "lexical+dense - dense",
        "all - lexical+dense",
        "all - all@fusion=scores",
        "all@graph=0.5 - lexical+dense",
        "all+rerank - all",
        "all@shapes=on - all" if flipped == "all@shapes=on" else "all - all@shapes=off",
        *(
            ["lexical - lexical@no-idf", "all - all@no-idf"]
            if idf == "no-idf"
            else ["lexical@idf - lexical", "all@idf - all"]
        ),
        "all@depth=1 - all",
    ]
    assert all(set(p["by_stratum"]) == {"single-hop", "temporal"} for p in report["paired_ci"].values())
    assert report["systems"]["lexical+dense"]["overall"]["recall@10"] > 0
    assert list(report[PER_QUERY]["systems"]) == list(report["systems"])
    assert report["embedding_model"] == "all-MiniLM-L6-v2"  # what the figures were embedded with
    out = io.StringIO()
    print_report(report, Console(file=out, width=200))
    assert "lexical+dense - lexical" in out.getvalue() and "hybrid" not in out.getvalue()
    assert "all+rerank - all" in out.getvalue()


async def test_only_the_systems_named_are_run(
    tmp_path: Path, settings: Settings, embedder: LocalEmbedder, conn: Any
) -> None:
    data = write_locomo(tmp_path / "locomo")
    user_id = await create_user(conn, "bench")
    config = BenchConfig(settings.database, settings.memories, settings.recall, settings.graph)
    db = await create_database(settings.database.url or "", settings.database)
    try:
        report = await bench_quality(
            config, embedder, db, user_id, data, "facts", only=frozenset({"all", "all+rerank"})
        )
    finally:
        await db.close()
    assert list(report["systems"]) == ["all", "all+rerank"]
    assert list(report["paired_ci"]) == ["all+rerank - all"]


def test_an_unknown_system_is_a_usage_error(tmp_path: Path) -> None:
    data = write_locomo(tmp_path / "locomo")
    result = CliRunner().invoke(bench, ["quality", "--data", str(data), "--systems", "all,all+rernak"])
    assert result.exit_code == 2
    assert "unknown systems all+rernak" in result.output and "all+rerank" in result.output
