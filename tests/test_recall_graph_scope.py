"""The graph leg over a scope of many namespaces reads it as one, not one namespace at a time.

A caller's namespace count must not multiply what a recall costs (issue #36). The lexical and dense
legs read a scope of more than `per_namespace_reads_max` namespaces in one scan; these tests pin
the graph leg's reads to the same shape: the concepts the query names found by one lookup for the
whole scope, and each concept's namespace looked up by its id, never by a pass over the scope's
namespaces. They read the plan the service's own statement runs (EXPLAIN ANALYZE of the generic
plan with the service's arguments), not a timing.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.db import Database, create_database
from app.db.plans import StatementTimer, walk_plan
from app.embeddings import LocalEmbedder
from app.graph.settings import GraphSettings
from app.memories.settings import MemorySettings
from app.recall.schemas import RecallRequest, RecallResponse
from app.recall.service import RecallService, set_local_sql
from app.recall.settings import RecallSettings
from app.recall.sql import recall_statement
from app.settings import DatabaseSettings
from tests.test_graph import CHAIN, drain

Client = AsyncTestClient[Litestar]

NAMESPACES = [f"g{i}" for i in range(6)]
CAP = 2  # per_namespace_reads_max: the scope of six is far above it
QUERY = "Who works with Zephyr?"


async def _store(client: Client, headers: dict[str, str], namespace: str, content: str) -> None:
    response = await client.post(
        "/v1/memories", json={"content": content, "namespace": namespace}, headers=headers
    )
    assert response.status_code == 201, response.text


@pytest.fixture
async def graph_db(client: Client, alice: dict[str, str], db_url: str) -> AsyncIterator[Database]:
    """Alice's six namespaces, each naming Zephyr; the first one holds the two-hop chain."""
    for content in CHAIN:
        await _store(client, alice, NAMESPACES[0], content)
    for namespace in NAMESPACES[1:]:
        await _store(client, alice, namespace, f"Zephyr waters the {namespace} plants on Mondays.")
    await drain(client)
    db = await create_database(db_url, DatabaseSettings(url=db_url, pool_min_size=1, pool_max_size=1))
    yield db
    await db.close()


async def _explained_recall(
    db: Database, embedder: LocalEmbedder, user_id: int, settings: RecallSettings
) -> tuple[RecallResponse, dict[str, Any]]:
    """A whole-scope recall by the real service, and EXPLAIN ANALYZE of the generic plan it runs."""
    timer = StatementTimer(recall_statement())
    async with db.read.acquire() as conn:
        conn.add_query_logger(timer)
    service = RecallService(db, embedder, settings, MemorySettings().tag_limits, GraphSettings())
    response = await service.recall(user_id, RecallRequest(query=QUERY, limit=20, explain=True))
    await asyncio.sleep(0)  # the logger callback runs on the next loop turn
    (_, args), *_ = timer.records
    async with db.read.acquire() as conn, conn.transaction(readonly=True):
        plan = await _explain_generic(conn, settings, args)
    return response, plan


async def _explain_generic(
    conn: asyncpg.Connection, settings: RecallSettings, args: tuple[Any, ...]
) -> dict[str, Any]:
    await conn.execute(set_local_sql(settings.model_copy(update={"generic_plan": True})))
    await conn.execute(f"PREPARE graph_scope_recall AS {recall_statement()}")
    types = await conn.fetchval(
        "SELECT parameter_types::text[] FROM pg_prepared_statements WHERE name = 'graph_scope_recall'"
    )
    literals = [
        f"{await conn.fetchval(f'SELECT quote_nullable($1::{kind}::text)', value)}::{kind}"
        for value, kind in zip(args, types, strict=True)
    ]
    raw = await conn.fetchval(
        f"EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE graph_scope_recall({', '.join(literals)})"
    )
    await conn.execute("DEALLOCATE graph_scope_recall")
    plan: dict[str, Any] = json.loads(raw)[0]
    return plan


def _nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [node for _, _, node in walk_plan(plan["Plan"])]


async def test_the_graph_leg_finds_the_concepts_a_query_names_in_one_read_of_the_whole_scope(
    graph_db: Database, embedder: LocalEmbedder, conn: asyncpg.Connection
) -> None:
    user_id = await conn.fetchval("SELECT id FROM users WHERE name = 'alice'")
    response, plan = await _explained_recall(
        graph_db, embedder, user_id, RecallSettings(per_namespace_reads_max=CAP)
    )
    # the concept the query names is a seed in every namespace of the scope
    seeded = {hit.namespace for hit in response.results if hit.explain and hit.explain.graph_path == "Zephyr"}
    assert seeded == set(NAMESPACES), response.results
    # concepts by name (or alias), not by id: each read runs once for the whole scope, never once
    # per namespace, and the names come from the index that leads with them
    by_name = [
        node
        for node in _nodes(plan)
        if node.get("Relation Name") == "concepts"
        and node.get("Index Name") != "concepts_pkey"
        and node.get("Actual Loops", 0) > 0
    ]
    assert by_name and all(node["Actual Loops"] == 1 for node in by_name), by_name
    assert "concepts_name_namespace_idx" in {node.get("Index Name") for node in _nodes(plan)}


async def test_the_graph_walk_looks_up_each_concepts_namespace_instead_of_passing_the_scope(
    graph_db: Database, embedder: LocalEmbedder, conn: asyncpg.Connection
) -> None:
    user_id = await conn.fetchval("SELECT id FROM users WHERE name = 'alice'")
    response, plan = await _explained_recall(
        graph_db, embedder, user_id, RecallSettings(per_namespace_reads_max=CAP)
    )
    assert any(hit.explain and hit.explain.graph_rank for hit in response.results)
    # past resolving the scope, every namespace the statement reads is one concept's own, by its
    # id: none passes over the scope's namespaces per seed, neighbour or hit
    reads = [
        node
        for part, _, node in walk_plan(plan["Plan"])
        if part not in {"CTE in_scope", "CTE graph_scope"}
        and (node.get("Relation Name") == "namespaces" or node.get("CTE Name") == "graph_scope")
        and node.get("Actual Loops", 0) > 0
    ]
    assert reads, "the graph leg reads no namespace: the fixture reaches no concept"
    shapes = [(node["Node Type"], node.get("Index Name"), node["Actual Rows"]) for node in reads]
    assert all(index == "namespaces_pkey" and rows <= 1 for _, index, rows in shapes), shapes


async def test_a_scope_of_many_namespaces_recalls_through_the_graph_what_one_at_a_time_recalls(
    graph_db: Database, embedder: LocalEmbedder, conn: asyncpg.Connection
) -> None:
    user_id = await conn.fetchval("SELECT id FROM users WHERE name = 'alice'")
    answers = []
    for cap in (16, CAP):
        response, _ = await _explained_recall(
            graph_db, embedder, user_id, RecallSettings(per_namespace_reads_max=cap)
        )
        answers.append([(hit.id, round(hit.score, 6), hit.explain) for hit in response.results])
    assert answers[0] == answers[1] and answers[0]
