"""The lexical leg's term rarity: per-namespace lexeme counts follow every change of a memory
(store, change, soft delete, restore, purge, sensitivity), counting is idempotent and retry-safe,
a recall reads the counts and never `memories` for them, and rare terms outrank common ones."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.auth.service import create_user
from app.db import Database, create_database
from app.jobs import JobWorker
from app.memories.service import content_hash
from app.recall.schemas import LegWeights, RecallRequest
from app.recall.service import RecallService
from app.recall.settings import RecallSettings
from app.recall.sql import recall_statement
from app.recall.statement import parameter_names
from app.recall.term_counts import (
    TERM_COUNT_JOB,
    TERM_LOCK_BASE,
    CompleteTermCounts,
    CountTerms,
    LockTermNamespaces,
    TermCounts,
    count_in,
)
from app.settings import DatabaseSettings, MemorySettings
from tests.fakes.embedders import ScriptedEmbedder

Client = AsyncTestClient[Litestar]
LEXICAL_ONLY = LegWeights(dense=0, graph=0)


async def drain(client: Client) -> None:
    """Run the jobs the writes left behind on the app's own loop."""
    jobs: JobWorker = client.app.state.jobs
    await asyncio.to_thread(lambda: client.blocking_portal.call(jobs.run_pending))


async def expected_counts(conn: asyncpg.Connection) -> tuple[dict[tuple[str, int], int], dict[int, int]]:
    """The counts as a scan of `memories` finds them: what the tables must hold."""
    rows = await conn.fetch(
        "SELECT namespace_id, tsvector_to_array(search_vector) AS lexemes FROM memories"
        " WHERE deleted_at IS NULL AND NOT is_sensitive"
    )
    terms: Counter[tuple[str, int]] = Counter()
    for row in rows:
        terms.update((lexeme, row["namespace_id"]) for lexeme in row["lexemes"])
    documents = Counter(row["namespace_id"] for row in rows)
    return dict(terms), dict(documents)


async def kept_counts(conn: asyncpg.Connection) -> tuple[dict[tuple[str, int], int], dict[int, int]]:
    terms = {
        (r["lexeme"], r["namespace_id"]): r["memories"]
        for r in await conn.fetch("SELECT lexeme, namespace_id, memories FROM term_counts")
    }
    documents = {
        r["namespace_id"]: r["memories"]
        for r in await conn.fetch("SELECT namespace_id, memories FROM namespace_terms WHERE memories <> 0")
    }
    return terms, documents


async def assert_counts_follow_the_memories(conn: asyncpg.Connection) -> None:
    assert await kept_counts(conn) == await expected_counts(conn)
    pending = await conn.fetchval("SELECT count(*) FROM jobs WHERE kind = $1", TERM_COUNT_JOB)
    assert pending == 0


async def test_counts_follow_store_change_delete_restore_purge_and_sensitivity(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    body = [
        {"content": "The boiler needs a yearly service", "namespace": "home"},
        {"content": "Service the bicycle chain every spring", "namespace": "home"},
        {"content": "Zephyr deploys billing with Terraform", "namespace": "work"},
    ]
    response = await client.post("/v1/memories", json=body, headers=alice)
    assert response.status_code == 201, response.text
    boiler, bicycle, zephyr = (r["id"] for r in response.json()["results"])
    await drain(client)
    terms, documents = await kept_counts(conn)
    assert terms[("servic", await _namespace(conn, "home"))] == 2 and sorted(documents.values()) == [1, 2]
    await assert_counts_follow_the_memories(conn)

    changed = await client.patch(
        f"/v1/memories/{boiler}", json={"content": "The furnace needs a yearly check"}, headers=alice
    )
    assert changed.status_code == 200, changed.text
    await drain(client)
    await assert_counts_follow_the_memories(conn)

    assert (await client.delete(f"/v1/memories/{bicycle}", headers=alice)).status_code == 204
    await drain(client)
    await assert_counts_follow_the_memories(conn)
    assert (await client.post(f"/v1/memories/{bicycle}/restore", headers=alice)).status_code == 200
    await drain(client)
    await assert_counts_follow_the_memories(conn)

    hidden = await client.patch(f"/v1/memories/{zephyr}", json={"is_sensitive": True}, headers=alice)
    assert hidden.status_code == 200, hidden.text
    await drain(client)
    await assert_counts_follow_the_memories(conn)
    assert await _namespace(conn, "work") not in (await kept_counts(conn))[1]

    # a purge leaves no job behind (it cascades away): its counts go in its own transaction
    purged = await client.delete(f"/v1/memories/{boiler}", params={"purge": "true"}, headers=alice)
    assert purged.status_code == 204
    await assert_counts_follow_the_memories(conn)
    assert not await conn.fetchval("SELECT count(*) FROM term_counts WHERE lexeme = 'furnac'")


async def _namespace(conn: asyncpg.Connection, name: str) -> int:
    namespace_id: int = await conn.fetchval("SELECT id FROM namespaces WHERE name = $1", name)
    return namespace_id


async def _insert(conn: asyncpg.Connection, namespace_id: int, contents: list[str]) -> list[int]:
    ids: list[int] = []
    for content in contents:
        ids.append(
            await conn.fetchval(
                "INSERT INTO memories (namespace_id, content, content_hash) VALUES ($1, $2, $3) RETURNING id",
                namespace_id,
                content,
                content_hash(content),
            )
        )
    return ids


@pytest.fixture
async def db(db_url: str) -> AsyncIterator[Database]:
    database = await create_database(db_url, DatabaseSettings(url=db_url, pool_min_size=1, pool_max_size=2))
    yield database
    await database.close()


async def test_counting_twice_or_after_a_rollback_counts_each_memory_once(db: Database) -> None:
    async with db.write.acquire() as conn:
        user_id = await create_user(conn, "terms")
        namespace_id = await conn.fetchval(
            "INSERT INTO namespaces (user_id, name) VALUES ($1, 'n') RETURNING id", user_id
        )
        ids = await _insert(conn, namespace_id, ["alpha beta", "beta gamma", "gamma delta"])
        queued = await conn.fetchval("SELECT count(*) FROM jobs WHERE kind = $1", TERM_COUNT_JOB)
        assert queued == 3  # the trigger enqueued one job per stored memory
        # a run whose transaction fails after counting leaves neither counts nor completions
        dying = conn.transaction()
        await dying.start()
        await count_in(conn, ids)
        await dying.rollback()  # the worker died before committing
        assert await conn.fetchval("SELECT count(*) FROM term_counts") == 0
        assert await conn.fetchval("SELECT count(*) FROM jobs WHERE kind = $1", TERM_COUNT_JOB) == 3
    counts = TermCounts(db.write)
    await counts.count(ids)
    await counts.count(ids)  # a second run of the same jobs (a retry after a lost completion)
    await counts.count([ids[0]])
    async with db.write.acquire() as conn:
        await assert_counts_follow_the_memories(conn)
        assert (await kept_counts(conn))[0][("beta", namespace_id)] == 2


async def test_a_memory_moved_to_an_unlocked_namespace_is_rolled_back_and_counted_on_retry(
    db: Database,
) -> None:
    async with db.write.acquire() as conn:
        user_id = await create_user(conn, "mover")
        first, second = [
            await conn.fetchval(
                "INSERT INTO namespaces (user_id, name) VALUES ($1, $2) RETURNING id", user_id, name
            )
            for name in ("a", "b")
        ]
        (memory,) = await _insert(conn, first, ["kestrel nest"])
        await TermCounts(db.write).count([memory])
        # counted in `first`, it moves to `second` after a job took `first`'s lock alone
        await conn.execute("UPDATE memories SET namespace_id = $2 WHERE id = $1", memory, second)
        before = await kept_counts(conn)
        rows = await CountTerms(memory_ids=[memory], locked=[first]).fetch(conn)
        assert [(r["what"], r["memory_id"]) for r in rows] == [("skipped", memory)]
        assert await kept_counts(conn) == before  # left alone: count_in raises, the job runs again
        await TermCounts(db.write).count([memory])
        await assert_counts_follow_the_memories(conn)
        assert (await kept_counts(conn))[0] == {("kestrel", second): 1, ("nest", second): 1}


async def test_a_purge_racing_the_counting_job_of_its_memory_neither_deadlocks_nor_miscounts(
    db_url: str, db: Database
) -> None:
    async with db.write.acquire() as conn:
        user_id = await create_user(conn, "racer")
        namespace_id = await conn.fetchval(
            "INSERT INTO namespaces (user_id, name) VALUES ($1, 'n') RETURNING id", user_id
        )
        (kept,) = await _insert(conn, namespace_id, ["osprey wings"])
        await TermCounts(db.write).count([kept])
        (doomed,) = await _insert(conn, namespace_id, ["osprey talons"])
    counting = await asyncpg.connect(db_url)
    purging = await asyncpg.connect(db_url)
    try:
        job = counting.transaction()
        await job.start()
        await count_in_up_to_completion(counting, [doomed])  # holds the namespace's count lock
        # the purge cascades the memory's job rows away, then waits for that lock (its trigger)
        purge = asyncio.create_task(purging.execute("DELETE FROM memories WHERE id = $1", doomed))
        await asyncio.sleep(0.3)
        assert not purge.done()
        await asyncio.wait_for(CompleteTermCounts(memory_ids=[doomed]).execute(counting), 5)
        await job.commit()
        await asyncio.wait_for(purge, 5)
    finally:
        await counting.close()
        await purging.close()
    async with db.write.acquire() as conn:
        await assert_counts_follow_the_memories(conn)
        assert (await kept_counts(conn))[0][("osprey", namespace_id)] == 1


async def count_in_up_to_completion(conn: asyncpg.Connection, memory_ids: list[int]) -> None:
    """`count_in` but for its last step, the completion of the jobs."""
    locked = [
        r["namespace_id"]
        for r in await LockTermNamespaces(lock_base=TERM_LOCK_BASE, memory_ids=memory_ids).fetch(conn)
    ]
    assert not await CountTerms(memory_ids=memory_ids, locked=locked).fetch(conn)


FILLER = [f"kubernetes note number {n}" for n in range(8)]
COMMON_TWICE = "kubernetes kubernetes cluster"
RARE_ONCE = "zephyr appeared here"


@pytest.fixture
async def rarity_corpus(db: Database) -> int:
    async with db.write.acquire() as conn:
        user_id = await create_user(conn, "rarity")
        namespace_id = await conn.fetchval(
            "INSERT INTO namespaces (user_id, name) VALUES ($1, 'r') RETURNING id", user_id
        )
        await _insert(conn, namespace_id, [*FILLER, COMMON_TWICE, RARE_ONCE])
    await TermCounts(db.write).count_pending()
    return int(user_id)


@pytest.mark.parametrize(
    ("idf", "min_memories", "first"),
    [(True, 0, RARE_ONCE), (False, 0, COMMON_TWICE), (True, 1000, COMMON_TWICE)],
    ids=["rarity", "no-rarity", "scope-too-small-for-rarity"],
)
async def test_a_rare_term_outranks_a_common_one_only_with_term_rarity_in_a_big_enough_scope(
    db: Database, rarity_corpus: int, embedder: Any, idf: bool, min_memories: int, first: str
) -> None:
    settings = RecallSettings(lexical_idf=idf, lexical_idf_min_memories=min_memories)
    service = RecallService(db, ScriptedEmbedder(embedder), settings, MemorySettings().tag_limits)
    request = RecallRequest(query="zephyr kubernetes", weights=LEXICAL_ONLY, explain=True)
    response = await service.recall(rarity_corpus, request)
    assert response.results[0].content == first
    assert response.settings is not None  # explain says what the lexical score means
    assert ("term rarity" in response.settings.lexical_mode) is idf


async def test_term_rarity_reads_the_counts_never_the_memories(db: Database, rarity_corpus: int) -> None:
    """The statement's `lexical_idf` part, as PostgreSQL runs it: index lookups of the counts."""
    args: dict[str, Any] = dict.fromkeys(parameter_names())
    args |= {
        "user_id": rarity_corpus,
        "share_owners": [],
        "share_names": [],
        "query": "zephyr kubernetes",
        "common_lexemes": [],
        "lexical_idf": True,
        "lexical_idf_min_memories": 0,
        "text_by_namespace": True,
        "include_sensitive": False,
        "row_filters": False,
        "tags_match_all": False,
        "lexical_cap": 1000,
        "w_lexical": 1.0,
        "leg_depth": 30,
        "w_dense": 0.0,
        "small_scope": True,
        "embedding_model": "none",
        "few_namespaces": True,
        "rrf_k": 5,
        "w_graph": 0.0,
        "graph_feedback_hits": 0,
        "graph_feedback_weight": 0.0,
        "graph_hub_min_doc_freq": 1.0,
        "graph_hub_fraction": 0.1,
        "graph_feedback_max_fraction": 0.1,
        "graph_feedback_concepts": 0,
        "seed_names": [],
        "graph_max_seeds": 0,
        "graph_seed_neighbors": 0,
        "graph_seed_min_similarity": 1.0,
        "graph_hop_decay": 0.5,
        "graph_fanout": 1,
        "graph_max_hops": 0,
        "graph_max_concepts": 1,
        "graph_memories_per_concept": 1,
        "score_fusion": False,
        "include_superseded": False,
        "importance_prior": 0.0,
        "episode_weight": 1.0,
        "limit": 10,
        "sort": "relevance",
    }
    async with db.read.acquire() as conn:
        plan = await conn.fetchval(
            f"EXPLAIN (ANALYZE, FORMAT JSON) {recall_statement()}",
            *(args[name] for name in parameter_names()),
        )
    nodes = _nodes(json.loads(plan)[0]["Plan"])
    idf_node = next(node for node in nodes if node.get("Subplan Name") == "CTE lexical_idf")
    relations = {node["Relation Name"] for node in _nodes(idf_node) if "Relation Name" in node}
    assert relations == {"namespace_terms", "term_counts"}
    assert all(
        node["Node Type"] in ("Index Scan", "Index Only Scan", "Bitmap Heap Scan", "Bitmap Index Scan")
        for node in _nodes(idf_node)
        if "Relation Name" in node or node["Node Type"].startswith("Bitmap")
    )


def _nodes(node: dict[str, Any]) -> list[dict[str, Any]]:
    return [node, *(n for child in node.get("Plans", ()) for n in _nodes(child))]
