"""Filtered recall must not come back short, and a big scope must recall through the indexes.

An HNSW scan with a WHERE clause filters *after* the index walk: with a namespace that holds 0.3%
of the table, `ORDER BY embedding <=> q LIMIT 50` on a plain index scan returns the handful of
in-scope rows among the first ef_search candidates and stops. Recall must still answer
min(limit, rows in scope) memories (iterative scan, then the exact fallback). These tests hold a
20,000-row table with one big namespace and a few small ones, written straight in SQL (random unit
vectors, short texts) so no model runs for the corpus.

The table is built once per module in its own database from the migrated template, and only read.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import asyncpg
import numpy as np
import psycopg
import pytest
from pgvector import HalfVector
from pgvector.asyncpg import register_vector

from app.auth.service import create_user
from app.db import Database, create_database
from app.db.plans import StatementTimer, plan_summary, walk_plan
from app.db.urls import with_database
from app.embeddings import LocalEmbedder
from app.memories.service import content_hash
from app.recall.schemas import LegWeights, RecallFilters, RecallRequest, RecallResponse
from app.recall.scope_sizes import ScopeSizes
from app.recall.service import RecallService, set_local_sql
from app.recall.sql import recall_statement
from app.settings import DatabaseSettings, EmbeddingSettings, MemorySettings, RecallSettings
from tests.conftest import DIMENSION, TEMPLATE_DB

TOTAL = 20_000
SCOPES = {"tiny": 60, "small": 200, "mid": 1_740}  # the rest of TOTAL goes to "big"
RARE_TAG_ROWS = 40  # rows of "big" tagged "rare"
HNSW_INDEX = "memories_embedding_hnsw_idx"
GIN_INDEX = "memories_search_idx"
NAMESPACE_INDEX = "memories_ns_created_idx"
SCOPE_VECTORS_INDEX = "memories_scope_vectors_idx"
SCOPE_SEARCH_INDEX = "memories_scope_search_idx"
EDGE_INDEXES = {"concept_edges_source_strongest_idx", "concept_edges_target_strongest_idx"}
WORDS = [f"{a}{b}" for a in ("kel", "mor", "tav", "rin", "sol", "dun", "pel", "vor") for b in range(60)]


@dataclass(frozen=True, slots=True)
class ScaleTable:
    url: str
    user_id: int
    counts: dict[str, int]


def _rows(namespace_ids: dict[str, int], model_id: str) -> list[tuple[Any, ...]]:
    rng = np.random.default_rng(20_000)
    vectors = rng.standard_normal((TOTAL, DIMENSION)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    words = rng.integers(0, len(WORDS), size=(TOTAL, 5))
    sizes = {**SCOPES, "big": TOTAL - sum(SCOPES.values())}
    owners = [name for name, size in sizes.items() for _ in range(size)]
    rows = []
    for i, owner in enumerate(owners):
        content = f"note {i}: " + " ".join(WORDS[w] for w in words[i])
        rare = owner == "big" and i >= len(owners) - RARE_TAG_ROWS  # "big" rows come last
        tags = ["scale", "rare"] if rare else ["scale"]
        vector = HalfVector(vectors[i])
        rows.append((namespace_ids[owner], content, tags, content_hash(content), vector, model_id))
    return rows


async def _fill(url: str, model_id: str) -> ScaleTable:
    conn = await asyncpg.connect(url)
    try:
        await register_vector(conn)
        user_id = await create_user(conn, "scale")
        names = ["big", *SCOPES]
        namespace_ids = {
            r["name"]: r["id"]
            for r in await conn.fetch(
                "INSERT INTO namespaces (user_id, name) SELECT $1, unnest($2::text[]) RETURNING id, name",
                user_id,
                names,
            )
        }
        # One COPY, then the HNSW index rebuilt from the migration's own definition: ten times
        # faster than maintaining it row by row, and the index the planner sees is the real one.
        hnsw = await conn.fetchval(f"SELECT pg_get_indexdef('{HNSW_INDEX}'::regclass)")
        await conn.execute(f"DROP INDEX {HNSW_INDEX}")
        await conn.copy_records_to_table(
            "memories",
            records=_rows(namespace_ids, model_id),
            columns=["namespace_id", "content", "tags", "content_hash", "embedding", "embedding_model"],
        )
        await conn.execute(hnsw)
        await conn.execute("VACUUM (ANALYZE) memories")
        counts = {
            r["name"]: r["n"]
            for r in await conn.fetch(
                "SELECT n.name, count(*) AS n FROM memories m JOIN namespaces n ON n.id = m.namespace_id "
                "GROUP BY n.name"
            )
        }
    finally:
        await conn.close()
    return ScaleTable(url=url, user_id=user_id, counts=counts)


@pytest.fixture(scope="module")
async def scale_table(
    pg_admin_url: str, template_url: str, embedding_settings: EmbeddingSettings
) -> AsyncIterator[ScaleTable]:
    name = f"scale_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(pg_admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE_DB}"')
    url = with_database(pg_admin_url, name)
    try:
        # recall compares only vectors of the configured model, as the store path labels them
        yield await _fill(url, embedding_settings.model_name)
    finally:
        with psycopg.connect(pg_admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


@pytest.fixture
async def scale_db(scale_table: ScaleTable) -> AsyncIterator[Database]:
    db = await create_database(scale_table.url, DatabaseSettings(url=scale_table.url))
    yield db
    await db.close()


@pytest.fixture
async def one_connection_db(scale_table: ScaleTable) -> AsyncIterator[Database]:
    """A pool of one connection: query loggers and prepared statements all live on it."""
    settings = DatabaseSettings(url=scale_table.url, pool_min_size=1, pool_max_size=1)
    db = await create_database(scale_table.url, settings)
    yield db
    await db.close()


DENSE_ONLY = LegWeights(lexical=0, graph=0)


def _service(
    db: Database, embedder: LocalEmbedder, leg_depth: int = 50, settings: RecallSettings | None = None
) -> RecallService:
    recall = settings or RecallSettings(leg_depth=leg_depth)
    return RecallService(db, embedder, recall, MemorySettings().tag_limits)


async def test_the_table_has_the_planned_shape(scale_table: ScaleTable) -> None:
    assert scale_table.counts == {**SCOPES, "big": TOTAL - sum(SCOPES.values())}


@pytest.mark.parametrize(
    ("namespace", "limit"),
    [("tiny", 50), ("tiny", 100), ("small", 50), ("small", 100), ("mid", 100), ("big", 100)],
)
async def test_dense_recall_in_a_small_scope_returns_min_of_limit_and_rows(
    scale_table: ScaleTable, scale_db: Database, embedder: LocalEmbedder, namespace: str, limit: int
) -> None:
    service = _service(scale_db, embedder, leg_depth=limit)
    response = await service.recall(
        scale_table.user_id,
        RecallRequest(query="what did we note", namespace=namespace, limit=limit, weights=DENSE_ONLY),
    )
    hits = response.results
    assert len(hits) == min(limit, scale_table.counts[namespace])
    assert {h.namespace for h in hits} == {namespace}
    assert len({h.id for h in hits}) == len(hits)


async def test_a_scope_smaller_than_the_limit_comes_back_whole(
    scale_table: ScaleTable, scale_db: Database, embedder: LocalEmbedder
) -> None:
    response = await _service(scale_db, embedder, leg_depth=100).recall(
        scale_table.user_id,
        RecallRequest(query="anything", namespace="tiny", limit=100, weights=DENSE_ONLY),
    )
    in_scope = await scale_db.read.fetch(
        "SELECT m.public_id AS id FROM memories m JOIN namespaces n ON n.id = m.namespace_id"  # the API's ids
        " WHERE n.name = 'tiny'"
    )
    assert {h.id for h in response.results} == {r["id"] for r in in_scope}


@pytest.mark.parametrize("limit", [10, 50])
async def test_dense_recall_with_a_selective_tag_filter_is_not_short(
    scale_table: ScaleTable, scale_db: Database, embedder: LocalEmbedder, limit: int
) -> None:
    response = await _service(scale_db, embedder).recall(
        scale_table.user_id,
        RecallRequest(
            query="the rare ones",
            namespace="big",
            limit=limit,
            weights=DENSE_ONLY,
            filters=RecallFilters(tags=["rare"]),
        ),
    )
    assert len(response.results) == min(limit, RARE_TAG_ROWS)
    assert all("rare" in h.tags and h.namespace == "big" for h in response.results)


async def test_hybrid_recall_across_all_scopes_fills_the_limit(
    scale_table: ScaleTable, scale_db: Database, embedder: LocalEmbedder
) -> None:
    response = await _service(scale_db, embedder).recall(
        scale_table.user_id, RecallRequest(query=f"{WORDS[0]} {WORDS[1]}", limit=50)
    )
    assert len(response.results) == 50


async def test_big_scope_recall_plan_uses_hnsw_for_dense_and_gin_for_lexical(
    scale_table: ScaleTable, one_connection_db: Database, embedder: LocalEmbedder
) -> None:
    db, timer, recall = one_connection_db, StatementTimer(recall_statement()), RecallSettings()
    async with db.read.acquire() as conn:
        conn.add_query_logger(timer)
    # the real service builds the arguments; the logger hands them over for EXPLAIN
    await RecallService(db, embedder, recall, MemorySettings().tag_limits).recall(
        scale_table.user_id, RecallRequest(query=f"{WORDS[3]} notes", namespace="big")
    )
    await asyncio.sleep(0)
    (_, args), *_ = timer.records
    async with db.read.acquire() as conn, conn.transaction(readonly=True):
        await conn.execute(set_local_sql(recall))
        raw = await conn.fetchval(f"EXPLAIN (FORMAT JSON) {recall_statement()}", *args)
    parts = plan_summary(json.loads(raw)[0])["parts"]
    assert HNSW_INDEX in parts["CTE dense_ann"]["indexes"], parts
    assert GIN_INDEX in parts["CTE lexical_strict"]["indexes"], parts


async def test_the_cached_generic_plan_uses_hnsw_for_dense_and_gin_for_lexical(
    scale_table: ScaleTable,
) -> None:
    conn = await asyncpg.connect(scale_table.url)
    try:
        # PREPARE infers the parameter types; EXPLAIN EXECUTE then shows the plan the cache would run
        await conn.execute(f"PREPARE recall AS {recall_statement()}")
        arity = await conn.fetchval(
            "SELECT cardinality(parameter_types) FROM pg_prepared_statements WHERE name = 'recall'"
        )
        async with conn.transaction(readonly=True):
            await conn.execute(set_local_sql(RecallSettings(generic_plan=True)))
            raw = await conn.fetchval(f"EXPLAIN (FORMAT JSON) EXECUTE recall({', '.join(['NULL'] * arity)})")
    finally:
        await conn.close()
    parts = plan_summary(json.loads(raw)[0])["parts"]
    assert HNSW_INDEX in parts["CTE dense_ann"]["indexes"], parts
    assert GIN_INDEX in parts["CTE lexical_strict"]["indexes"], parts
    # the exact scan reads its namespaces through an index, never the whole table: the vectors
    # index alone without row filters, the namespace index and the table with them
    assert parts["CTE dense_exact"]["indexes"] == sorted([NAMESPACE_INDEX, SCOPE_VECTORS_INDEX]), parts
    assert "Index Only Scan" in parts["CTE dense_exact"]["nodes"], parts
    assert "Seq Scan" not in parts["CTE dense_exact"]["nodes"], parts
    # small scopes ask the scoped text index for their namespaces' matches alone, no BitmapAnd
    assert parts["CTE lexical_strict"]["indexes"] == sorted([GIN_INDEX, SCOPE_SEARCH_INDEX]), parts
    assert "BitmapAnd" not in parts["CTE lexical_strict"]["nodes"], parts
    # the graph walk reads each concept's strongest edges in order, from the index on either end
    nodes = [node for _, _, node in walk_plan(json.loads(raw)[0]["Plan"])]
    edge_reads = [node for node in nodes if node.get("Relation Name") == "concept_edges"]
    assert {node.get("Index Name") for node in edge_reads} == EDGE_INDEXES, edge_reads


async def test_the_walk_keeps_a_candidate_list_grown_with_the_table_from_its_first_recall(
    scale_table: ScaleTable, one_connection_db: Database, embedder: LocalEmbedder
) -> None:
    # 20,000 rows, two tenfolds beyond 200: 40 + 2 x 60 candidates
    settings = RecallSettings(ef_search=40, ef_search_grows_above=200, ef_search_per_tenfold=60)
    service = _service(one_connection_db, embedder, settings=settings)
    sent: list[str] = []
    async with one_connection_db.read.acquire() as conn:
        conn.add_query_logger(lambda record: sent.append(record.query))
    request = RecallRequest(query="notes", namespace="big", explain=True)
    first = await service.recall(scale_table.user_id, request)
    # the first BEGIN went out before the table's size was known; the list was set again before the
    # statement, in the same transaction
    begin = next(i for i, query in enumerate(sent) if query.startswith("BEGIN"))
    statement = sent.index(recall_statement())
    assert "hnsw.ef_search = 40;" in sent[begin]
    assert "SET LOCAL hnsw.ef_search = 160" in sent[begin + 1 : statement]
    assert first.settings is not None and first.settings.ef_search == 160
    sent.clear()
    await service.recall(scale_table.user_id, request)
    (begin_again,) = [query for query in sent if query.startswith("BEGIN")]
    assert "hnsw.ef_search = 160;" in begin_again
    assert not [query for query in sent if query.startswith("SET LOCAL hnsw.ef_search")]


async def test_a_table_below_the_growth_threshold_walks_with_the_configured_list(
    scale_table: ScaleTable, scale_db: Database, embedder: LocalEmbedder
) -> None:
    response = await _service(scale_db, embedder, settings=RecallSettings()).recall(
        scale_table.user_id, RecallRequest(query="notes", namespace="big", explain=True)
    )
    assert response.settings is not None and response.settings.ef_search == RecallSettings().ef_search


async def _plan_counts(db: Database) -> tuple[int, int]:
    async with db.read.acquire() as conn:
        row = await conn.fetchrow(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1",
            recall_statement(),
        )
    assert row is not None
    return row["generic_plans"], row["custom_plans"]


async def test_every_scope_reuses_the_connections_generic_plan(
    scale_table: ScaleTable, one_connection_db: Database, embedder: LocalEmbedder
) -> None:
    service = _service(one_connection_db, embedder)
    for namespace in ("big", "mid", "tiny", "big"):  # HNSW, exact, exact, HNSW
        await service.recall(scale_table.user_id, RecallRequest(query="notes", namespace=namespace))
    assert await _plan_counts(one_connection_db) == (4, 0)


@pytest.mark.parametrize("namespace", ["big", "mid"])
async def test_the_generic_plan_recalls_what_re_planning_recalls(
    scale_table: ScaleTable, scale_db: Database, embedder: LocalEmbedder, namespace: str
) -> None:
    answers = []
    for generic_plan in (True, False):
        service = RecallService(
            scale_db, embedder, RecallSettings(generic_plan=generic_plan), MemorySettings().tag_limits
        )
        response = await service.recall(
            scale_table.user_id,
            RecallRequest(query=f"{WORDS[5]} {WORDS[70]} notes", namespace=namespace, limit=30, explain=True),
        )
        answers.append([(h.id, h.explain) for h in response.results])
    assert answers[0] == answers[1]
    assert len(answers[0]) == 30


def _memory_rows_read(node: dict[str, Any]) -> float:
    """Rows the plan fetched from `memories` (kept or filtered out), over every node."""
    own = 0.0
    if node.get("Relation Name") == "memories":
        loops = node.get("Actual Loops", 1)
        own = (node.get("Actual Rows", 0) + node.get("Rows Removed by Filter", 0)) * loops
    return own + sum(_memory_rows_read(child) for child in node.get("Plans", []))


async def test_a_user_without_namespaces_recalls_nothing_and_reads_no_memories(
    one_connection_db: Database, embedder: LocalEmbedder
) -> None:
    async with one_connection_db.write.acquire() as conn:
        newcomer = await create_user(conn, f"newcomer-{uuid.uuid4().hex[:8]}")
    # "note" is in every row: a plan that filters by namespace after the text index reads them all
    response, raw = await _recall_explained(
        one_connection_db, embedder, newcomer, RecallRequest(query="note scale")
    )
    assert response.results == []
    assert _memory_rows_read(json.loads(raw)[0]["Plan"]) == 0


async def _recall_explained(
    db: Database,
    embedder: LocalEmbedder,
    user_id: int,
    request: RecallRequest,
    settings: RecallSettings | None = None,
) -> tuple[RecallResponse, str]:
    """A recall by the real service, and EXPLAIN ANALYZE of the generic plan with its arguments."""
    timer = StatementTimer(recall_statement())
    async with db.read.acquire() as conn:
        conn.add_query_logger(timer)
    response = await _service(db, embedder, settings=settings).recall(user_id, request)
    await asyncio.sleep(0)
    (_, args), *_ = timer.records
    async with db.read.acquire() as conn, conn.transaction(readonly=True):
        raw = await _explain_generic(conn, args)
    return response, raw


async def _explain_generic(conn: asyncpg.Connection, args: tuple[Any, ...]) -> str:
    """EXPLAIN ANALYZE of the generic plan recall runs (EXPLAIN with bound values plans for them)."""
    await conn.execute(set_local_sql(RecallSettings(generic_plan=True)))
    await conn.execute(f"PREPARE recall_generic AS {recall_statement()}")
    types = await conn.fetchval(
        "SELECT parameter_types::text[] FROM pg_prepared_statements WHERE name = 'recall_generic'"
    )
    literals = [
        f"{await conn.fetchval(f'SELECT quote_nullable($1::{kind}::text)', value)}::{kind}"
        for value, kind in zip(args, types, strict=True)
    ]
    raw: str = await conn.fetchval(
        f"EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE recall_generic({', '.join(literals)})"
    )
    await conn.execute("DEALLOCATE recall_generic")
    return raw


def _memory_reads(raw: str, part: str) -> dict[str, tuple[int, int]]:
    """Per index that `part` read `memories` through: (loops run, table rows fetched)."""
    reads: dict[str, tuple[int, int]] = {}
    for name, _, node in walk_plan(json.loads(raw)[0]["Plan"]):
        if name == part and node.get("Relation Name") == "memories":
            key, runs = node.get("Index Name", node["Node Type"]), node.get("Actual Loops", 0)
            loops, fetched = reads.get(key, (0, 0))
            heap = node.get("Heap Fetches", node.get("Actual Rows", 0)) * runs
            reads[key] = (loops + runs, fetched + heap)
    return reads


async def test_an_exact_scan_without_row_filters_reads_the_scope_vectors_index_alone(
    scale_table: ScaleTable, one_connection_db: Database, embedder: LocalEmbedder
) -> None:
    response, raw = await _recall_explained(
        one_connection_db,
        embedder,
        scale_table.user_id,
        RecallRequest(query="notes", namespace="mid", weights=DENSE_ONLY),
    )
    assert len(response.results) == 10
    # the table was vacuumed: its vectors come from the index, not one table page per memory
    reads = _memory_reads(raw, "CTE dense_exact")
    assert reads.pop(SCOPE_VECTORS_INDEX) == (1, 0)
    assert all(loops == 0 for loops, _ in reads.values()), reads  # the row-filter branch never ran


async def test_an_exact_scan_with_a_row_filter_reads_the_table(
    scale_table: ScaleTable, one_connection_db: Database, embedder: LocalEmbedder
) -> None:
    request = RecallRequest(
        query="notes", namespace="mid", weights=DENSE_ONLY, filters=RecallFilters(tags=["scale"])
    )
    response, raw = await _recall_explained(one_connection_db, embedder, scale_table.user_id, request)
    assert len(response.results) == 10 and all("scale" in h.tags for h in response.results)
    reads = _memory_reads(raw, "CTE dense_exact")
    assert reads.pop(SCOPE_VECTORS_INDEX)[0] == 0
    # one read of the table (through the namespace index), every row of the scope fetched
    assert list(reads.values()) == [(1, SCOPES["mid"])], reads


@pytest.mark.parametrize(
    ("per_sqrt_table", "small"),
    # √20,000 ≈ 141: 10 x 141 = 1,414 rows, 20 x 141 = 2,828 rows
    [(10.0, {"tiny", "small"}), (20.0, {"tiny", "small", "mid"}), (0.0, {"tiny", "small"})],
)
async def test_the_small_scope_threshold_grows_with_the_square_root_of_the_table(
    scale_table: ScaleTable, scale_db: Database, per_sqrt_table: float, small: set[str]
) -> None:
    sizes = ScopeSizes(floor=1_000, per_sqrt_table=per_sqrt_table, ttl_s=60)
    async with scale_db.read.acquire() as conn:
        ids = {r["name"]: r["id"] for r in await conn.fetch("SELECT id, name FROM namespaces")}
        found = {name for name, namespace_id in ids.items() if await sizes.is_small(conn, [namespace_id])}
    assert found == small
    assert sizes.threshold == max(1_000, int(per_sqrt_table * TOTAL**0.5))


async def test_a_count_capped_below_a_grown_threshold_is_counted_again(scale_db: Database) -> None:
    now = [0.0]
    sizes = ScopeSizes(floor=1_000, per_sqrt_table=20.0, ttl_s=60, clock=lambda: now[0])
    async with scale_db.read.acquire() as conn:
        ids = {r["name"]: r["id"] for r in await conn.fetch("SELECT id, name FROM namespaces")}
        # the table's statistics read while they called it empty (threshold 1,000); the catalog
        # row is changed in a transaction nobody else sees
        transaction = conn.transaction()
        await transaction.start()
        try:
            await conn.execute("UPDATE pg_class SET reltuples = 0 WHERE oid = 'memories'::regclass")
            assert await sizes.is_small(conn, [ids["tiny"]])
        finally:
            await transaction.rollback()
        now[0] = 30.0  # "big" counted against that threshold stops at it: "1,000 or more"
        assert not await sizes.is_small(conn, [ids["big"]])
        assert sizes.threshold == 1_000
        # the table's size is read again, the count is still fresh: the table grew (threshold
        # 2,828), and "1,000 or more" cannot tell, so "big" is counted again, not taken for 1,000
        now[0] = 61.0
        assert not await sizes.is_small(conn, [ids["big"]])
        assert sizes.threshold == int(20.0 * TOTAL**0.5)


@pytest.mark.parametrize(
    ("namespaces", "small", "text_by_namespace"),
    [
        (["tiny"], True, True),
        (["mid"], False, True),  # 8.7% of the table: its text matches asked for alone
        (["big"], False, False),  # 90%: most of the table's matches are its own
        (["mid", "big"], False, False),
    ],
)
async def test_a_big_scope_holding_a_minority_of_the_table_reads_its_text_namespace_by_namespace(
    scale_db: Database, namespaces: list[str], small: bool, text_by_namespace: bool
) -> None:
    sizes = ScopeSizes(floor=1_000, per_sqrt_table=0.0, ttl_s=60, text_by_namespace_below=0.4)
    async with scale_db.read.acquire() as conn:
        ids = {r["name"]: r["id"] for r in await conn.fetch("SELECT id, name FROM namespaces")}
        reads = await sizes.reads(conn, [ids[name] for name in namespaces])
    assert (reads.small, reads.text_by_namespace) == (small, text_by_namespace)


async def test_a_big_scope_reads_its_text_table_wide_until_the_table_is_analysed(scale_db: Database) -> None:
    sizes = ScopeSizes(floor=1_000, per_sqrt_table=0.0, ttl_s=60, text_by_namespace_below=0.4)
    async with scale_db.read.acquire() as conn:
        mid = await conn.fetchval("SELECT id FROM namespaces WHERE name = 'mid'")
        transaction = conn.transaction()  # the statistics gone, in a transaction nobody else sees
        await transaction.start()
        try:
            await conn.execute("DELETE FROM pg_statistic WHERE starelid = 'memories'::regclass")
            reads = await sizes.reads(conn, [mid])
        finally:
            await transaction.rollback()
    assert (reads.small, reads.text_by_namespace) == (False, False)


def _index_reads(raw: str, part: str) -> dict[str, tuple[int, int]]:
    """Per index that `part` scanned: (loops run, entries it yielded)."""
    reads: dict[str, tuple[int, int]] = {}
    for name, _, node in walk_plan(json.loads(raw)[0]["Plan"]):
        if name == part and "Index Name" in node:
            loops, rows = reads.get(node["Index Name"], (0, 0))
            runs = node.get("Actual Loops", 0)
            reads[node["Index Name"]] = (loops + runs, rows + int(node.get("Actual Rows", 0) * runs))
    return reads


async def test_a_minority_scope_asks_the_scoped_text_index_and_finds_what_the_table_wide_read_finds(
    scale_table: ScaleTable, one_connection_db: Database, embedder: LocalEmbedder
) -> None:
    # the word is in ~1% of the rows, in every namespace; "mid" holds 8.7% of the table and, with
    # these settings, 1,000 rows or more: a big scope, walked on the HNSW index
    request = RecallRequest(query=f"{WORDS[5]} note", namespace="mid", limit=30)
    answers, text_reads = [], []
    for below in (0.4, 0.0):
        settings = RecallSettings(
            exact_scan_below=1_000, exact_scan_per_sqrt_rows=0, text_by_namespace_below_share=below
        )
        response, raw = await _recall_explained(
            one_connection_db, embedder, scale_table.user_id, request, settings
        )
        answers.append([hit.id for hit in response.results])
        assert _index_reads(raw, "CTE dense_ann")[HNSW_INDEX][0] == 1
        text_reads.append(_index_reads(raw, "CTE lexical_strict"))
    assert answers[0] == answers[1] and len(answers[0]) == 30
    by_namespace, table_wide = text_reads
    assert by_namespace[SCOPE_SEARCH_INDEX][0] == 1 and by_namespace[GIN_INDEX][0] == 0, by_namespace
    assert table_wide[SCOPE_SEARCH_INDEX][0] == 0 and table_wide[GIN_INDEX][0] == 1, table_wide
    # namespace by namespace the index yields the scope's matches alone, table-wide every namespace's
    matched_in_scope = by_namespace[SCOPE_SEARCH_INDEX][1]
    assert matched_in_scope > 0 and 5 * matched_in_scope < table_wide[GIN_INDEX][1], text_reads


async def test_a_query_of_stop_words_finds_nothing_lexical_in_a_small_scope(
    scale_table: ScaleTable, scale_db: Database, embedder: LocalEmbedder
) -> None:
    # the words AND the namespace's lexeme: with no words left, that would be every memory in it
    response = await _service(scale_db, embedder).recall(
        scale_table.user_id,
        RecallRequest(query="the of and", namespace="mid", weights=LegWeights(dense=0, graph=0)),
    )
    assert response.results == []


@pytest.mark.parametrize(
    ("namespaces", "few", "small", "text_by_namespace"),
    [
        (["tiny", "small"], True, True, True),  # at the cap: one namespace at a time
        (["tiny", "small", "mid"], False, True, False),  # past it: text table-wide, one exact scan
        (["tiny", "small", "mid", "big"], False, False, False),
    ],
)
async def test_a_scope_of_more_namespaces_than_the_cap_is_never_read_namespace_by_namespace(
    scale_db: Database, namespaces: list[str], few: bool, small: bool, text_by_namespace: bool
) -> None:
    sizes = ScopeSizes(
        floor=3_000, per_sqrt_table=0.0, ttl_s=60, text_by_namespace_below=0.4, per_namespace_max=2
    )
    async with scale_db.read.acquire() as conn:
        ids = {r["name"]: r["id"] for r in await conn.fetch("SELECT id, name FROM namespaces")}
        reads = await sizes.reads(conn, [ids[name] for name in namespaces])
    assert (reads.few_namespaces, reads.small, reads.text_by_namespace) == (few, small, text_by_namespace)


@pytest.mark.parametrize("weights", [DENSE_ONLY, LegWeights(dense=0, graph=0), None])
@pytest.mark.parametrize("filters", [RecallFilters(), RecallFilters(tags=["scale"])])
async def test_a_scope_of_many_namespaces_reads_each_leg_once_and_finds_what_one_at_a_time_finds(
    scale_table: ScaleTable,
    one_connection_db: Database,
    embedder: LocalEmbedder,
    weights: LegWeights | None,
    filters: RecallFilters,
) -> None:
    """The same small scope of three namespaces, read one namespace at a time and in one scan
    (recall.sql's [namespace count]): the same hits, and no lookup per namespace in the second."""
    request = RecallRequest(
        query=f"{WORDS[3]} {WORDS[70]}",
        namespaces=["tiny", "small", "mid"],
        limit=20,
        filters=filters,
        weights=weights,
    )
    answers, plans = [], []
    for cap in (16, 2):
        settings = RecallSettings(
            exact_scan_below=3_000, exact_scan_per_sqrt_rows=0, per_namespace_reads_max=cap
        )
        response, raw = await _recall_explained(
            one_connection_db, embedder, scale_table.user_id, request, settings=settings
        )
        answers.append([(hit.id, round(hit.score, 6)) for hit in response.results])
        plans.append(raw)
    assert answers[0] == answers[1] and answers[0]
    for part in ("CTE lexical_strict", "CTE dense_exact"):
        # one namespace at a time: one loop per namespace; all at once: no read runs more than once
        assert all(loops <= 1 for loops, _ in _memory_reads(plans[1], part).values()), (part, plans[1])
    nodes = [
        node for name, _, node in walk_plan(json.loads(plans[1])[0]["Plan"]) if name == "CTE dense_exact"
    ]
    assert not [node for node in nodes if node["Node Type"] == "Seq Scan" and node.get("Actual Loops")]
