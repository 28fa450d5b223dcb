"""`memoria bench latency`: its arithmetic, its resumable load, and one small run end to end.

No figure is asserted: speed is what the command prints. These tests check that it measures what
it says (distinct texts, paired modes, the service's own arguments) and that it keeps working as
the recall code changes underneath it.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from app.auth.service import create_user
from app.core.stats import latency_summary
from app.db import create_database
from app.db.plans import plan_summary
from app.embeddings import LocalEmbedder
from app.memories.service import MemoryService
from app.settings import Settings
from memoria_bench.cli import bench
from memoria_bench.config import BenchConfig
from memoria_bench.corpus import generate_memories, load_pool
from memoria_bench.latency.bulk import INDEXES, bulk_store
from memoria_bench.latency.hnsw import TIE_EPSILON, score_query
from memoria_bench.latency.http import SPLIT_COLUMNS, request_body, request_split
from memoria_bench.latency.load import index_concepts, memory_in, store_corpus
from memoria_bench.latency.schedule import QueryFeed, blocks, paired_blocks
from memoria_bench.latency.scopes import live_counts
from memoria_bench.latency.targets import ratios_to_lexical, target_checks
from tests.test_bench_corpus import write_sentences


def test_latency_rows_report_percentiles_the_worst_and_throughput() -> None:
    stats = latency_summary([float(v) for v in range(1, 101)], wall_s=2.0)
    assert stats == {
        "n": 100, "p50": 50.5, "p95": 95.05, "p99": 99.01, "mean": 50.5, "max": 100.0, "per_second": 50.0
    }  # fmt: skip


def test_query_feed_never_hands_out_a_text_twice() -> None:
    feed = QueryFeed([f"q{i}" for i in range(5)])
    assert feed.take(2) == ["q0", "q1"]
    assert feed.take(3) == ["q2", "q3", "q4"]
    with pytest.raises(ValueError, match="distinct"):
        feed.take(1)


def test_modes_alternate_in_blocks_over_the_same_texts() -> None:
    texts = [f"q{i}" for i in range(120)]
    order = list(blocks(texts, ["lexical", "all"]))
    assert [mode for mode, _ in order] == ["lexical", "all"] * 3
    assert order[0][1] == order[1][1] == texts[:50]
    assert order[4][1] == texts[100:]
    # the statements go text by text through every mode
    single = list(blocks(texts[:2], ["lexical", "lexical+dense", "all"], size=1))
    assert single == [(m, [t]) for t in texts[:2] for m in ("lexical", "lexical+dense", "all")]


def test_lexical_requests_switch_every_other_leg_off() -> None:
    assert request_body("q", "ns", "lexical")["weights"] == {"dense": 0.0, "graph": 0.0}
    assert "weights" not in request_body("q", "ns", "all")


def test_http_blocks_never_repeat_a_text_that_embeds_and_pair_each_with_lexical() -> None:
    texts_of = {"lexical+dense": [f"a{i}" for i in range(120)], "all": [f"b{i}" for i in range(120)]}
    order = list(paired_blocks(texts_of, size=50))
    embedded = [t for mode, texts in order if mode != "lexical" for t in texts]
    assert sorted(embedded) == sorted(texts_of["lexical+dense"] + texts_of["all"])  # each once
    lexical = [t for mode, texts in order if mode == "lexical" for t in texts]
    assert sorted(lexical) == sorted(embedded)
    for (first, texts), (second, same) in zip(order[::2], order[1::2], strict=True):
        assert first == "lexical" and second != "lexical" and texts == same


def _row(path: str, mode: str, p50: float, p95: float, concurrency: int = 1) -> dict[str, Any]:
    return {"path": path, "scope": "big", "concurrency": concurrency, "mode": mode, "p50": p50, "p95": p95}


def test_fused_over_lexical_ratios_pair_rows_of_the_same_run() -> None:
    rows = [
        _row("http", "lexical", 4.0, 10.0),
        _row("http", "lexical+dense", 6.0, 12.0),
        _row("http", "all", 10.0, 15.0),
        _row("sql", "all", 1, 1),
    ]
    common = {"path": "http", "scope": "big", "concurrency": 1}
    assert ratios_to_lexical(rows) == [
        {**common, "mode": "lexical+dense", "p50": 1.5, "p95": 1.2},
        {**common, "mode": "all", "p50": 2.5, "p95": 1.5},
    ]


def test_targets_are_reported_met_or_missed() -> None:
    rows = [
        _row("http", "lexical", 5.0, 9.0),
        _row("http", "lexical+dense", 9.0, 25.0),
        {**_row("http", "all", 12.0, 40.0), "split": {"rest": 2.5}},
        {**_row("http", "all", 50.0, 90.0, concurrency=8), "p99": 160.0, "per_second": 151.0},
    ]
    report = {
        "corpus": {"table_rows": 100_000},
        "latency": rows,
        "ratios": ratios_to_lexical(rows),
        "hnsw": [{"scope": "big", "recall@10": 0.99}],
    }
    met = {c["target"]: c["met"] for c in target_checks(report)}
    assert met == {
        "HTTP lexical+dense p50, c=1, big": True,
        "HTTP lexical+dense p95, c=1, big": True,
        "lexical+dense/lexical p50, c=1, big": True,
        "HTTP all, big, c=1: p50": True,
        "HTTP all, big, c=1: p95": False,
        "HTTP all, big, c=1: non-SQL, non-embedding": False,
        "HTTP all, big, c=8: req/s": True,
        "HTTP all, big, c=8: p99/p50": False,  # 3.2x
        "HNSW recall@10, big": True,
    }


def test_a_million_memories_are_judged_by_the_every_leg_p95_of_a_million() -> None:
    rows = [{**_row("http", "all", 30.0, 45.0), "split": {"rest": 2.5}}]
    report = {"corpus": {"table_rows": 1_000_000}, "latency": rows, "ratios": [], "hnsw": []}
    assert [(c["target"], c["goal"], c["met"]) for c in target_checks(report)] == [
        ("HTTP all, big, c=1: p95", "≤ 50ms", True)
    ]


def test_a_requests_rest_is_what_the_client_waited_for_neither_sql_nor_the_embedding() -> None:
    phases = {"app": 11.0, "begin": 0.3, "embed": 2.5, "embed-wait": 2.0, "sql": 8.0, "commit": 0.3}
    split = request_split(phases, client_ms=12.0)
    assert split["rest"] == pytest.approx(2.0)  # 12 - 8 - 2
    assert split["outside"] == pytest.approx(1.0) and split["other"] == pytest.approx(0.4)


def test_hnsw_recall_counts_near_twins_of_the_exact_ten_only_within_the_tie_threshold() -> None:
    exact = [(i, 0.30 + i * 0.001) for i in range(10)]  # the tenth at 0.309
    assert score_query(dict(exact), exact) == (1.0, 1.0)
    twins = {100 + i: 0.3095 for i in range(10)}  # other memories, as close as the tenth
    assert score_query(twins, exact) == (0.0, 1.0)
    farther = {100 + i: 0.3095 + TIE_EPSILON for i in range(10)}
    assert score_query(farther, exact) == (0.0, 0.0)
    mixed = {0: 0.30, 1: 0.301, 200: 0.5, 201: None}  # two exact, one far off, one without distance
    assert score_query(mixed, exact) == (0.2, 0.2)


def test_plan_summary_times_each_cte_inlined_or_not_and_names_its_indexes() -> None:
    plan = {
        "Execution Time": 9.5,
        "Plan": {
            "Node Type": "Sort",
            "Actual Total Time": 9.0,
            "Actual Rows": 10,
            "Plans": [
                {
                    "Node Type": "Limit",
                    "Subplan Name": "CTE dense_ann",
                    "Actual Total Time": 3.0,
                    "Actual Loops": 2,
                    "Actual Rows": 50,
                    "Plans": [{"Node Type": "Index Scan", "Index Name": "memories_embedding_hnsw_idx"}],
                },
                {"Node Type": "Bitmap Index Scan", "Index Name": "memories_pkey"},
                {
                    "Node Type": "Subquery Scan",
                    "Alias": "lexical_broad",
                    "Actual Total Time": 2.0,
                    "Actual Rows": 50,
                    "Plans": [{"Node Type": "Bitmap Index Scan", "Index Name": "memories_search_idx"}],
                },
            ],
        },
    }
    parts = plan_summary(plan)["parts"]
    assert parts["CTE dense_ann"]["ms"] == 6.0 and parts["CTE dense_ann"]["rows"] == 50
    assert parts["CTE dense_ann"]["indexes"] == ["memories_embedding_hnsw_idx"]
    assert parts["main"]["ms"] == 9.0 and parts["main"]["indexes"] == ["memories_pkey"]
    assert parts["inlined lexical_broad"]["ms"] == 2.0
    assert parts["inlined lexical_broad"]["indexes"] == ["memories_search_idx"]


async def test_a_cut_off_load_resumes_and_a_full_one_is_skipped(
    tmp_path: Path, settings: Settings, embedder: LocalEmbedder, conn: Any
) -> None:
    pool = load_pool(write_sentences(tmp_path / "sentences.txt"))
    memories = list(generate_memories(pool, 250, namespaces=3))
    user_id = await create_user(conn, "bench")
    db = await create_database(settings.database.url or "", settings.database)
    console = Console(file=io.StringIO())
    try:
        await MemoryService(db, embedder, settings.memories).store(
            user_id, [memory_in(m) for m in memories[:100]]
        )  # an earlier run stored one batch, then stopped
        resumed = await store_corpus(db, embedder, settings.memories, user_id, memories, console)
        assert resumed["stored_now"] == 150
        assert sum((await live_counts(db.write, user_id)).values()) == 250
        assert (await store_corpus(db, embedder, settings.memories, user_id, memories, console))[
            "stored_now"
        ] == 0
    finally:
        await db.close()


async def test_a_bulk_load_resumes_writes_the_store_paths_rows_and_rebuilds_the_indexes(
    tmp_path: Path, settings: Settings, embedder: LocalEmbedder, conn: Any
) -> None:
    pool = load_pool(write_sentences(tmp_path / "sentences.txt"))
    memories = list(generate_memories(pool, 250, namespaces=3))
    user_id = await create_user(conn, "bench")
    db = await create_database(settings.database.url or "", settings.database)
    console = Console(file=io.StringIO())
    try:
        await MemoryService(db, embedder, settings.memories).store(
            user_id, [memory_in(m) for m in memories[:100]]
        )  # an earlier run stored these, then stopped
        loaded = await bulk_store(db, embedder, settings.memories, user_id, memories, console, rebuild_at=100)
        assert loaded["stored_now"] == 150 and loaded["indexes_rebuilt"]
        again = await bulk_store(db, embedder, settings.memories, user_id, memories, console, rebuild_at=100)
        assert again["stored_now"] == 0
    finally:
        await db.close()
    # the rows the store route writes: every memory once, embedded by the model, hashed the same way
    rows = await conn.fetch(
        "SELECT content, content_hash = sha256(convert_to(content, 'UTF8')) AS hashed, embedding_model "
        "FROM memories ORDER BY id"
    )
    assert [r["content"] for r in rows] == [m.content for m in memories]
    assert all(r["hashed"] for r in rows) and {r["embedding_model"] for r in rows} == {embedder.model_id}
    # the indexes are back, as the migrations create them, and answer queries
    defined = {r["indexname"]: r["indexdef"] for r in await conn.fetch("SELECT * FROM pg_indexes")}
    schema = (Path(__file__).parents[1] / "migrations" / "schema.sql").read_text()
    for name, definition in INDEXES.items():
        # pg_indexes names the schema only when it is off the search path
        assert defined[name].replace("public.", "") == definition.replace("public.", "")
        assert f"{definition};" in schema
    hits = await conn.fetchval(
        "SELECT count(*) FROM memories WHERE search_vector @@ plainto_tsquery('english', $1)",
        memories[-1].content,
    )
    assert hits >= 1


def _small_run(
    tmp_path: Path, *options: str, env: dict[str, str] | None = None
) -> tuple[str, dict[str, Any]]:
    """`memoria bench latency` over 300 memories in 3 namespaces, with `options` (each run's own
    requests, queries, concurrency and warm-up); its output and its JSON report."""
    out = tmp_path / "latency.json"
    sentences = write_sentences(tmp_path / "sentences.txt")
    args = ["latency", "--memories", "300", "--namespaces", "3", *options]
    args += ["--sentences", str(sentences), "--json", str(out)]
    result = CliRunner().invoke(bench, args, env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(out.read_text())
    return result.output, report


@pytest.mark.e2e
def test_a_small_run_prints_every_figure_and_writes_json(tmp_path: Path) -> None:
    output, report = _small_run(
        tmp_path, "--requests", "10", "--hnsw-queries", "5", "--concurrency", "1,2", "--cache-warmup", "3"
    )
    assert "where an HTTP recall's time goes" in output
    rows = {(r["path"], r["scope"], r["concurrency"], r["mode"]): r for r in report["latency"]}
    for scope in ("big", "small"):
        for concurrency in (1, 2):
            assert rows[("http", scope, concurrency, "lexical")]["n"] == 20  # beside each fused mode
            for mode in ("lexical+dense", "all"):
                assert rows[("http", scope, concurrency, mode)]["n"] == 10
            # the served API sends Server-Timing: every HTTP row says where its time went
            for mode in ("lexical", "lexical+dense", "all"):
                split = rows[("http", scope, concurrency, mode)]["split"]
                assert set(split) == set(SPLIT_COLUMNS) and split["sql"] > 0 and split["auth"] > 0
        for mode in ("lexical", "lexical+dense", "all"):
            assert rows[("sql", scope, 1, mode)]["n"] == 10
    assert [h["scope"] for h in report["hnsw"]] == ["big", "small"]
    assert all(0 <= h["recall@10"] <= 1 for h in report["hnsw"])
    assert all(h["ci95"][0] <= h["recall@10"] <= h["ci95"][1] for h in report["hnsw"])
    # a hit among the exact ten is within the tie threshold too; the worst queries say their text
    assert all(h["within_tie"]["recall@10"] >= h["recall@10"] for h in report["hnsw"])
    assert all(q["recall@10"] < 1 and q["query"] for h in report["hnsw"] for q in h["worst"])
    assert {"big/all", "small/lexical"} <= set(report["explain"])
    profile = report["explain"]["big/all"]
    assert profile["statements"] > 0 and "CTE dense_ann" in profile["parts_ms_p50"]
    assert "Execution Time" in profile["slowest"]["text"]
    assert "recall latency" in output and "HNSW recall@10" in output
    assert "warming the caches with 3 recalls" in output


@pytest.fixture(scope="module")
def scoped_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    """One small run with the middle and the whole scope asked for and a candidate list that grows
    above 30 rows, shared by the tests of each: every run loads its corpus into its own embedded
    PostgreSQL and starts its own `memoria serve`, the cost of this file. Three requests a series
    leave the four scopes enough distinct questions of the 300 memories."""
    return _small_run(
        tmp_path_factory.mktemp("latency-scopes"), "--requests", "3", "--mid-scope", "--whole-scope",
        "--hnsw-queries", "5", "--concurrency", "1", "--cache-warmup", "1",
        env={"MEMORIA_RECALL__EF_SEARCH_GROWS_ABOVE": "30"},
    )  # fmt: skip


def test_a_mid_scope_run_times_the_biggest_of_the_other_namespaces_too(
    scoped_run: tuple[str, dict[str, Any]],
) -> None:
    _, report = scoped_run
    scopes = {s["label"]: s for s in report["scopes"]}
    # the first namespace, the bigger other, the smaller (then the whole scope, asked for too)
    assert list(scopes) == ["big", "mid", "small", "whole"]
    assert scopes["big"]["rows"] > scopes["mid"]["rows"] >= scopes["small"]["rows"] > 0
    assert scopes["mid"]["namespace"] != scopes["small"]["namespace"]
    timed = {(r["path"], r["scope"], r["mode"]) for r in report["latency"]}
    assert {("http", "mid", "all"), ("sql", "mid", "all")} <= timed
    assert "HTTP all, mid, c=1: p50" in {t["target"] for t in report["targets"]}


def test_a_whole_scope_run_times_a_recall_across_every_namespace_against_the_big_one(
    scoped_run: tuple[str, dict[str, Any]],
) -> None:
    _, report = scoped_run
    scopes = {s["label"]: s for s in report["scopes"]}
    assert list(scopes) == ["big", "mid", "small", "whole"]  # the middle one asked for too
    assert scopes["whole"]["namespace"] is None and scopes["whole"]["namespaces"] == 3
    assert scopes["whole"]["rows"] == report["corpus"]["table_rows"]
    timed = {(r["path"], r["scope"], r["mode"]) for r in report["latency"]}
    assert {("http", "whole", "all"), ("sql", "whole", "all")} <= timed
    assert "HTTP all p50, c=1: whole scope / big" in {t["target"] for t in report["targets"]}


def test_the_whole_scope_is_judged_within_twice_the_big_namespace_per_path_and_mode() -> None:
    rows = [
        _row("http", "all", 10.0, 20.0),
        {**_row("http", "all", 19.0, 45.0), "scope": "whole"},
        {**_row("sql", "all", 4.0, 8.0)},
        {**_row("sql", "all", 9.0, 12.0), "scope": "whole"},
    ]
    report = {"corpus": {"table_rows": 100_000}, "latency": rows, "ratios": [], "hnsw": []}
    checks = {c["target"]: (c["value"], c["met"]) for c in target_checks(report) if "whole" in c["target"]}
    assert checks == {
        "HTTP all p50, c=1: whole scope / big": (1.9, True),
        "HTTP all p95, c=1: whole scope / big": (2.25, False),
        "SQL all p50, c=1: whole scope / big": (2.25, False),
        "SQL all p95, c=1: whole scope / big": (1.5, True),
    }


def test_the_report_names_the_candidate_list_the_service_walks_this_table_with(
    scoped_run: tuple[str, dict[str, Any]],
) -> None:
    # 300 rows, one tenfold beyond 30: the configured 100 grows to 200
    output, report = scoped_run
    settings = report["settings"]
    assert (settings["ef_search"], settings["ef_search_used"]) == (100, 200)
    assert "ef_search 200," in output and "exact search (ef_search 200)" in output


@pytest.mark.parametrize("concept_embeddings", [False, True])
async def test_concepts_are_embedded_only_when_the_product_would_embed_them(
    tmp_path: Path, settings: Settings, embedder: LocalEmbedder, conn: Any, concept_embeddings: bool
) -> None:
    pool = load_pool(write_sentences(tmp_path / "sentences.txt"))
    memories = list(generate_memories(pool, 100, namespaces=2))
    user_id = await create_user(conn, "bench")
    graph = settings.graph.model_copy(update={"concept_embeddings": concept_embeddings})
    config = BenchConfig(settings.database, settings.memories, settings.recall, graph)
    db = await create_database(settings.database.url or "", settings.database)
    console = Console(file=io.StringIO())
    try:
        await store_corpus(db, embedder, settings.memories, user_id, memories, console)
        indexed = await index_concepts(db, embedder, config, user_id, console)
        assert indexed["indexed_now"] == 100
        embedded = await conn.fetchval("SELECT count(*) FROM concepts WHERE embedding IS NOT NULL")
        assert (embedded > 0) is concept_embeddings
        assert (await index_concepts(db, embedder, config, user_id, console))["indexed_now"] == 0  # resumed
    finally:
        await db.close()
