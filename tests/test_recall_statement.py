"""The recall statement and its binding cannot drift apart, and what ships is what runs.

`app/recall/recall.sql` names its parameters (`:name`); `RecallArgs` binds them, its field order
numbering them `$1..$n`. These tests fail when a parameter has no field, a field no parameter, the
numbering skips or repeats, or a field's Python type is not what PostgreSQL makes of its parameter.
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
import re
import tomllib
import types
import typing
from dataclasses import fields
from datetime import UTC, datetime
from typing import Any

import asyncpg
import numpy as np
import pytest
from pgvector import HalfVector

from app.auth.service import create_user
from app.db import create_database, read_only_transaction
from app.db.plans import StatementTimer, walk_plan
from app.db.queries import compile_named, expand, fragment_text, fragments_of, named_parameters, parse
from app.embeddings import LocalEmbedder
from app.memories.service import content_hash
from app.recall.schemas import LegWeights, RecallRequest
from app.recall.service import RecallService, set_local_sql
from app.recall.settings import RecallSettings
from app.recall.sql import recall_sql, recall_statement
from app.recall.statement import RecallArgs, parameter_names
from app.settings import DatabaseSettings, MemorySettings
from tests.conftest import DIMENSION, REPO_ROOT

SHIPPED = REPO_ROOT / "app" / "recall" / "recall.sql"

# The Python type asyncpg takes for each PostgreSQL parameter type the statement uses.
PYTHON_TYPE_OF = {
    "bigint": int,
    "integer": int,
    "double precision": float,
    "boolean": bool,
    "text": str,
    "text[]": list[str],
    "bigint[]": list[int],
    "timestamp with time zone": datetime,
    "halfvec": HalfVector,
}


def _python_type(annotation: Any) -> Any:
    """The annotation without `| None`, and a Literal as the type of its values."""
    if isinstance(annotation, types.UnionType):
        (annotation,) = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
    if typing.get_origin(annotation) is typing.Literal:
        (annotation,) = {type(value) for value in typing.get_args(annotation)}
    return annotation


def _args(**overrides: Any) -> RecallArgs:
    values: dict[str, Any] = {
        "user_id": 1,
        "own_names": None,
        "share_owners": [],
        "share_names": [],
        "query": "q",
        "common_lexemes": [],
        "expanded_query": None,
        "lexical_idf": False,
        "lexical_idf_min_memories": 100,
        "text_by_namespace": False,
        "include_sensitive": False,
        "category": None,
        "tags": None,
        "tags_match_all": False,
        "created_since": None,
        "kinds": None,
        "created_until": None,
        "lexical_cap": 1000,
        "w_lexical": 1.0,
        "leg_depth": 50,
        "query_vec": None,
        "w_dense": 0.0,
        "small_scope": False,
        "embedding_model": "m",
        "few_namespaces": True,
        "graph_hub_min_doc_freq": 25,
        "graph_hub_fraction": 0.01,
        "w_graph": 0.0,
        "seed_names": [],
        "graph_max_seeds": 8,
        "graph_seed_neighbors": 0,
        "graph_seed_min_similarity": 0.6,
        "graph_hop_decay": 0.25,
        "graph_fanout": 8,
        "graph_max_hops": 2,
        "graph_max_concepts": 32,
        "graph_memories_per_concept": 50,
        "graph_feedback_hits": 20,
        "graph_feedback_max_fraction": 0.02,
        "graph_feedback_weight": 1.0,
        "graph_feedback_concepts": 16,
        "score_fusion": False,
        "rrf_k": 10,
        "include_superseded": False,
        "as_of": None,
        "importance_prior": 0.3,
        "episode_weight": 0.85,
        "limit": 10,
        "sort": "relevance",
    }
    return RecallArgs(**(values | overrides))


def test_every_named_parameter_is_a_field_and_every_field_a_parameter() -> None:
    in_sql, in_args = set(named_parameters(recall_sql())), set(parameter_names())
    assert in_sql - in_args == set(), "parameters RecallArgs lacks"
    assert in_args - in_sql == set(), "RecallArgs fields the statement never uses"


def test_fields_are_numbered_in_the_order_the_statement_first_uses_them() -> None:
    assert parameter_names() == named_parameters(recall_sql())


def test_the_compiled_statement_has_one_placeholder_per_field_and_no_names_left() -> None:
    statement = recall_statement()
    numbers = {int(n) for n in re.findall(r"\$(\d+)", statement)}
    assert numbers == set(range(1, len(fields(RecallArgs)) + 1))
    assert named_parameters(statement) == []


def test_colons_in_casts_literals_and_comments_are_not_parameters() -> None:
    sql = "SELECT :a::int, ':b', \"x:c\", 1 -- :d\n/* :e */ WHERE x = :f OR y = :a"
    assert named_parameters(sql) == ["a", "f"]
    assert compile_named(sql, ["f", "a"]) == (
        "SELECT $2::int, ':b', \"x:c\", 1 -- :d\n/* :e */ WHERE x = $1 OR y = $2"
    )


def test_a_parameter_outside_the_binding_is_refused() -> None:
    with pytest.raises(ValueError, match=":b"):
        compile_named("SELECT :a, :b", ["a"])


async def test_postgres_reads_each_parameter_as_the_type_of_its_field(conn: asyncpg.Connection) -> None:
    await conn.execute(f"PREPARE recall AS {recall_statement()}")
    inferred = await conn.fetchval(
        "SELECT parameter_types::text[] FROM pg_prepared_statements WHERE name = 'recall'"
    )
    hints = typing.get_type_hints(RecallArgs)
    mismatched = {
        name: (kind, hints[name])
        for name, kind in zip(parameter_names(), inferred, strict=True)
        if PYTHON_TYPE_OF.get(kind) != _python_type(hints[name])
    }
    assert mismatched == {}


async def test_postgres_prepares_the_expanded_statement_as_written(conn: asyncpg.Connection) -> None:
    # what PostgreSQL holds is the expanded text itself: every fragment in place, no marker and no
    # named parameter left, and each `$n` one RecallArgs field
    statement = recall_statement()
    assert "{{" not in statement and "}}" not in statement
    assert named_parameters(statement) == []
    await conn.execute(f"PREPARE expanded AS {statement}")
    prepared = await conn.fetchval("SELECT statement FROM pg_prepared_statements WHERE name = 'expanded'")
    assert prepared == f"PREPARE expanded AS {statement}"


def test_every_copy_of_the_scope_rule_is_the_fragment_expanded() -> None:
    # the rule is written once; each of its uses in the statement is that one text
    in_scope = fragment_text("in_scope", "m", package="app.recall", file="recall.sql")
    recall_sql_file = {"package": "app.recall", "file": "recall.sql"}
    visible = fragment_text(
        "visible_to", "m", "{{ own_scope(m) }}", ":include_sensitive::boolean", **recall_sql_file
    )
    flat = " ".join(recall_sql().split())
    assert flat.count(" ".join(in_scope.split())) == 8  # three tiers twice, the ANN scan, the graph check
    # and both exact-scan branches both ways (per namespace, many at once), the by-id check, the
    # successor walk and check, the fixes
    assert flat.count(" ".join(visible.split())) == 16
    # the superseding memory is checked by the same rule, under its own name
    newer = fragment_text(
        "visible_to", "newer", "{{ own_scope(newer) }}", ":include_sensitive::boolean", **recall_sql_file
    )
    assert flat.count(" ".join(newer.split())) == 1
    rest = flat.replace(" ".join(visible.split()), "").replace(" ".join(newer.split()), "")
    assert "deleted_at" not in rest


async def test_the_service_runs_recall_sql_as_shipped(db_url: str, embedder: LocalEmbedder) -> None:
    sql_file = parse(SHIPPED.read_text(encoding="utf-8"))
    expanded = expand(sql_file.queries["recall"], fragments_of("app.recall", SHIPPED.name))
    shipped = StatementTimer(compile_named(expanded, parameter_names()))
    db = await create_database(db_url, DatabaseSettings(url=db_url, pool_min_size=1, pool_max_size=1))
    try:
        async with db.write.acquire() as conn:
            user_id = await create_user(conn, "shipped")
        async with db.read.acquire() as conn:
            conn.add_query_logger(shipped)
        service = RecallService(db, embedder, RecallSettings(), MemorySettings().tag_limits)
        await service.recall(user_id, RecallRequest(query="what ships runs"))
    finally:
        await db.close()
    (_, args), *others = shipped.records
    assert others == [] and len(args) == len(fields(RecallArgs))


async def test_the_recall_transaction_never_compiles_the_statement_with_jit(conn: asyncpg.Connection) -> None:
    # the server's default, whose cost threshold the generic plan is above
    assert await conn.fetchval("SELECT current_setting('jit')") == "on"
    async with read_only_transaction(conn, set_local_sql(RecallSettings())):
        assert await conn.fetchval("SELECT current_setting('jit')") == "off"
        assert await conn.fetchval("SELECT current_setting('max_parallel_workers_per_gather')") == "0"
    assert await conn.fetchval("SELECT current_setting('jit')") == "on"  # SET LOCAL: gone at COMMIT


async def test_rows_the_importance_prior_cannot_lift_into_the_top_are_never_read(
    db_url: str, embedder: LocalEmbedder
) -> None:
    db = await create_database(db_url, DatabaseSettings(url=db_url, pool_min_size=1, pool_max_size=1))
    try:
        async with db.write.acquire() as conn:
            user_id = await create_user(conn, "prior")
            namespace_id = await conn.fetchval(
                "INSERT INTO namespaces (user_id, name) VALUES ($1, 'default') RETURNING id", user_id
            )
            # 50 matches of the word, ranked by how often it occurs; the 3rd to 12th matter most
            contents = [f"note {i}: " + "zyxwort " * (50 - i) for i in range(50)]
            importance = [1.0 if 2 <= i < 12 else 0.0 for i in range(50)]
            await conn.copy_records_to_table(
                "memories",
                records=[
                    (namespace_id, c, w, content_hash(c)) for c, w in zip(contents, importance, strict=True)
                ],
                columns=["namespace_id", "content", "importance", "content_hash"],
            )
        timer = StatementTimer(recall_statement())
        async with db.read.acquire() as conn:
            conn.add_query_logger(timer)
        service = RecallService(db, embedder, RecallSettings(), MemorySettings().tag_limits)
        lexical = LegWeights(dense=0, graph=0)
        every = await service.recall(user_id, RecallRequest(query="zyxwort", limit=50, weights=lexical))
        top = await service.recall(
            user_id, RecallRequest(query="zyxwort", limit=10, weights=lexical, explain=True)
        )
        await asyncio.sleep(0)
        # the same ten as ranking all fifty, and the prior did reorder them
        assert [hit.id for hit in top.results] == [hit.id for hit in every.results[:10]]
        ranks = [hit.explain.lexical_rank or 0 for hit in top.results if hit.explain is not None]
        assert ranks != sorted(ranks)
        (_, args) = timer.records[-1]
        async with db.read.acquire() as conn, read_only_transaction(conn, set_local_sql(RecallSettings())):
            raw = await conn.fetchval(f"EXPLAIN (ANALYZE, FORMAT JSON) {recall_statement()}", *args)
    finally:
        await db.close()
    # after the legs, memories are read one by one: the ten answers, and before them, for the
    # prior and the episode weight, 20 of the leg's 50 (those scoring at least 0.7 x 0.85 x the
    # 10th best: 1 / (5 + rank) >= 0.595 / 15)
    lookups = sorted(
        node["Actual Loops"]
        for part, _, node in walk_plan(json.loads(raw)[0]["Plan"])
        if part in ("main", "CTE ranked") and node.get("Relation Name") == "memories"
    )
    assert lookups == [10, 20], [
        (part, node.get("Actual Loops"))
        for part, _, node in walk_plan(json.loads(raw)[0]["Plan"])
        if node.get("Relation Name") == "memories"
    ]


def test_the_package_ships_recall_sql() -> None:
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    package_data: dict[str, list[str]] = pyproject["tool"]["setuptools"]["package-data"]
    patterns = package_data.get("app.recall", []) + package_data.get("*", [])
    assert any(fnmatch.fnmatch(SHIPPED.name, pattern) for pattern in patterns), package_data


def test_row_filters_is_on_exactly_when_a_row_filter_is_set() -> None:
    assert _args().row_filters is False
    since = datetime(2026, 1, 1, tzinfo=UTC)
    row_filters: list[dict[str, Any]] = [
        {"category": "c"},
        {"tags": ["t"]},
        {"created_since": since},
        {"kinds": ["episode"]},
        {"created_until": since},
    ]
    for row_filter in row_filters:
        assert _args(**row_filter).row_filters is True, row_filter


def test_a_leg_reading_the_query_vector_without_one_is_refused() -> None:
    with pytest.raises(ValueError, match="query vector"):
        _args(w_dense=1.0)
    with pytest.raises(ValueError, match="query vector"):
        _args(w_graph=0.25, graph_seed_neighbors=5)
    vector = HalfVector(np.ones(DIMENSION, dtype=np.float32) / np.sqrt(DIMENSION))
    _args(w_dense=1.0, w_graph=0.25, graph_seed_neighbors=5, query_vec=vector)


def test_values_are_the_fields_in_placeholder_order() -> None:
    values = dict(zip(parameter_names(), _args(query="the query", limit=7).values(), strict=True))
    assert values["query"] == "the query" and values["limit"] == 7
