"""Durable background jobs: rows in Postgres, written with the memory, worked by a bounded pool.

The queue is exercised directly (a `JobWorker` on a pool with test handlers) for its mechanics —
backoff, recorded failures, leases, stop — and through the real app for the contract: every
acknowledged write gets its concept indexing (and its embedding once the provider is back), and a
store raced by a delete, purge or change of the same memory never fails or leaves the graph half
done. The crash cases (kill -9 of the server, of PostgreSQL) are in test_jobs_e2e.py.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import httpx
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from prometheus_client import CollectorRegistry

from app.core.metrics import JobMetrics
from app.db.migrate import downgrade_to, upgrade_to_head
from app.embeddings import Embedder, LocalEmbedder
from app.embeddings.backfill import EMBED_JOB
from app.factory import create_app
from app.graph import INDEX_JOB
from app.graph.extract import extract_concepts
from app.jobs import BatchFailed, Job, JobSettings, JobWorker, NewJob
from app.settings import DatabaseSettings, Settings
from tests.fakes.apps import headers_for
from tests.fakes.embedding_server import FakeEmbeddingServer
from tests.fakes.providers import openai_compatible, openai_settings
from tests.ids import internal_id, internal_ids

Client = AsyncTestClient[Litestar]
TEST_KIND = "test.work"
QUICK = JobSettings(workers=0, backoff_base_s=1.0, backoff_cap_s=4.0, max_attempts=3, batch_size=10)


# --- helpers ---------------------------------------------------------------------------------------


async def drain(client: Client) -> None:
    """Run every due job on the app's own event loop (the test client runs the app in a portal)."""
    jobs: JobWorker = client.app.state.jobs
    await asyncio.to_thread(lambda: client.blocking_portal.call(jobs.run_pending))


@asynccontextmanager
async def app_client(settings: Settings, embedder: Embedder) -> AsyncIterator[Client]:
    """The app with these settings, its lifespan (and so its job worker) running."""
    async with AsyncTestClient(app=create_app(settings, embedder=embedder)) as client:
        yield client


def hosted(url: str, fake: FakeEmbeddingServer) -> Settings:
    """Settings of an app whose provider is the fake (hosted: sensitive text must not reach it)."""
    return Settings(database=DatabaseSettings(url=url), embeddings=openai_settings(fake.url, 384), jobs=QUICK)


async def seed_memories(conn: asyncpg.Connection, contents: Sequence[str], **columns: Any) -> list[int]:
    """Memories written straight into the table (as an import would), without jobs or vectors."""
    user_id = await conn.fetchval(
        "INSERT INTO users (name) VALUES ('seed') ON CONFLICT (name) DO UPDATE SET name = 'seed' RETURNING id"
    )
    namespace_id = await conn.fetchval(
        "INSERT INTO namespaces (user_id, name) VALUES ($1, 'seed') "
        "ON CONFLICT (user_id, name) DO UPDATE SET name = 'seed' RETURNING id",
        user_id,
    )
    ids = []
    for content in contents:
        ids.append(
            await conn.fetchval(
                "INSERT INTO memories (namespace_id, content, content_hash, is_sensitive) "
                "VALUES ($1, $2, $3, $4) RETURNING id",
                namespace_id,
                content,
                hashlib.sha256(content.encode()).digest(),
                columns.get("is_sensitive", False),
            )
        )
    if await conn.fetchval("SELECT to_regclass('memory_terms') IS NOT NULL"):
        # the term-counting jobs the insert trigger added (migration 0018): these tests watch others
        await conn.execute("DELETE FROM jobs WHERE kind = 'recall.term_counts' AND memory_id = ANY($1)", ids)
    return ids


async def enqueue(pool: asyncpg.Pool, worker: JobWorker, jobs: Sequence[NewJob]) -> None:
    async with pool.acquire() as conn, conn.transaction():
        await worker.queue.add(conn, jobs)


async def job_rows(conn: asyncpg.Connection) -> dict[int, asyncpg.Record]:
    """Jobs by memory id, with the wait before their next run (exact: both stamps are one now())."""
    rows = await conn.fetch(
        "SELECT memory_id, kind, state, attempts, last_error, leased_until, "
        "extract(epoch FROM run_after - updated_at)::float8 AS backoff_s FROM jobs ORDER BY id"
    )
    return {r["memory_id"]: r for r in rows}


class Recorder:
    """A handler that records the batches it gets and fails for the memories it is told to."""

    def __init__(self, failing: set[int] | None = None, outage: bool = False) -> None:
        self.batches: list[list[int]] = []
        self.failing = failing or set()
        self.outage = outage

    async def __call__(self, jobs: Sequence[Job]) -> None:
        ids = [job.memory_id for job in jobs if job.memory_id is not None]  # these tests' jobs all name one
        self.batches.append(ids)
        if self.outage:
            raise BatchFailed("provider unavailable")
        bad = self.failing & set(ids)
        if bad:
            raise RuntimeError(f"cannot process memory {min(bad)}")

    @property
    def seen(self) -> Counter[int]:
        return Counter(memory_id for batch in self.batches for memory_id in batch)


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """These tests race many requests through one key: rate limits are not what they pin down."""
    return settings.model_copy(update={"auth": settings.auth.model_copy(update={"rate_limits": False})})


@pytest.fixture
async def pool(db_url: str) -> AsyncIterator[asyncpg.Pool]:
    created = await asyncpg.create_pool(db_url, min_size=1, max_size=4)
    yield created
    await created.close()


async def worker_with(pool: asyncpg.Pool, handler: Callable[[Sequence[Job]], Awaitable[None]]) -> JobWorker:
    worker = JobWorker(pool, QUICK)
    worker.register(TEST_KIND, handler)
    return worker


# --- the queue's mechanics -------------------------------------------------------------------------


async def test_a_failing_job_backs_off_is_recorded_and_does_not_block_the_others(
    pool: asyncpg.Pool, conn: asyncpg.Connection
) -> None:
    ids = await seed_memories(conn, [f"memory {i}" for i in range(5)])
    bad = ids[2]
    handler = Recorder(failing={bad})
    worker = await worker_with(pool, handler)
    await enqueue(pool, worker, [NewJob(TEST_KIND, i) for i in ids])

    assert await worker.run_pending() == 5
    # the batch failed as a whole, then each job ran alone: only the culprit failed
    assert handler.batches[0] == ids and handler.seen == Counter(dict.fromkeys(ids, 2))
    jobs = await job_rows(conn)
    assert list(jobs) == [bad], "the others are done (deleted)"
    assert (jobs[bad]["state"], jobs[bad]["attempts"], jobs[bad]["backoff_s"]) == ("queued", 1, 1.0)
    assert jobs[bad]["last_error"] == f"RuntimeError: cannot process memory {bad}"
    assert jobs[bad]["leased_until"] is None

    # not due yet: nothing runs, and a new job is not held back by the failing one
    (late,) = await seed_memories(conn, ["late memory"])
    await enqueue(pool, worker, [NewJob(TEST_KIND, late)])
    await worker.run_pending()
    assert handler.seen[late] == 1 and handler.seen[bad] == 2
    assert list(await job_rows(conn)) == [bad]

    # each further failure doubles the wait (1, 2, 4 s; capped at 4), the last one gives up
    for attempts, backoff, state in [(2, 2.0, "queued"), (3, 4.0, "failed")]:
        await conn.execute("UPDATE jobs SET run_after = now()")  # its backoff has passed
        await worker.run_pending()
        job = (await job_rows(conn))[bad]
        assert (job["attempts"], job["backoff_s"], job["state"]) == (attempts, backoff, state)
    await conn.execute("UPDATE jobs SET run_after = now()")
    assert await worker.run_pending() == 0, "a failed job is a record, not retried"
    assert handler.seen[bad] == 4


async def test_failed_runs_are_counted_by_kind_and_whether_the_job_gave_up(
    pool: asyncpg.Pool, conn: asyncpg.Connection
) -> None:
    (bad,) = await seed_memories(conn, ["fails every time"])
    registry = CollectorRegistry()
    worker = JobWorker(pool, QUICK, JobMetrics(registry))
    worker.register(TEST_KIND, Recorder(failing={bad}))
    await enqueue(pool, worker, [NewJob(TEST_KIND, bad)])

    def failures(final: str) -> float | None:
        return registry.get_sample_value("memoria_job_failures_total", {"kind": TEST_KIND, "final": final})

    for _ in range(QUICK.max_attempts):
        await conn.execute("UPDATE jobs SET run_after = now()")
        await worker.run_pending()
    assert (failures("false"), failures("true")) == (QUICK.max_attempts - 1, 1)


async def test_an_outage_backs_off_the_whole_batch_without_trying_each_job(
    pool: asyncpg.Pool, conn: asyncpg.Connection
) -> None:
    ids = await seed_memories(conn, [f"memory {i}" for i in range(4)])
    handler = Recorder(outage=True)
    worker = await worker_with(pool, handler)
    await enqueue(pool, worker, [NewJob(TEST_KIND, i) for i in ids])
    await worker.run_pending()
    assert handler.batches == [ids], "one call: no job is the culprit of an outage"
    jobs = await job_rows(conn)
    assert [(j["state"], j["attempts"], j["backoff_s"]) for j in jobs.values()] == [("queued", 1, 1.0)] * 4
    assert {j["last_error"] for j in jobs.values()} == {"BatchFailed: provider unavailable"}


async def test_a_dead_workers_jobs_are_handed_out_again_once_their_lease_expires(
    pool: asyncpg.Pool, conn: asyncpg.Connection
) -> None:
    expired, leased = await seed_memories(conn, ["claimed by a dead worker", "claimed by a live one"])
    handler = Recorder()
    worker = await worker_with(pool, handler)
    await enqueue(pool, worker, [NewJob(TEST_KIND, expired), NewJob(TEST_KIND, leased)])
    # what a worker killed mid-run leaves: claimed (running, one attempt), never finished
    await conn.execute(
        "UPDATE jobs SET state = 'running', attempts = 1, leased_until = now() + "
        "CASE WHEN memory_id = $1 THEN interval '-1 second' ELSE interval '1 hour' END",
        expired,
    )
    assert await worker.run_pending() == 0, "running jobs are not claimed again"
    assert await worker.reconcile() == 1
    assert await worker.run_pending() == 1
    assert handler.seen == Counter({expired: 1})
    jobs = await job_rows(conn)
    assert list(jobs) == [leased] and jobs[leased]["state"] == "running"


async def test_stop_hands_unfinished_jobs_back_within_its_bound(
    pool: asyncpg.Pool, conn: asyncpg.Connection
) -> None:
    ids = await seed_memories(conn, ["slow one", "slow two"])
    started = asyncio.Event()

    async def hangs(jobs: Sequence[Job]) -> None:
        started.set()
        await asyncio.sleep(3600)

    worker = JobWorker(pool, JobSettings(workers=1, poll_interval_s=0.05))
    worker.register(TEST_KIND, hangs)
    await worker.start()
    await enqueue(pool, worker, [NewJob(TEST_KIND, i) for i in ids])
    worker.queue.wake()
    await asyncio.wait_for(started.wait(), 10)
    assert {j["state"] for j in (await job_rows(conn)).values()} == {"running"}

    began = time.monotonic()
    await worker.stop(grace_s=0.2)
    assert time.monotonic() - began < 3
    jobs = await job_rows(conn)
    assert [(j["state"], j["attempts"], j["leased_until"]) for j in jobs.values()] == [
        ("queued", 0, None)
    ] * 2
    await worker.stop(grace_s=0.2)  # a second stop is harmless


async def test_an_enqueue_wakes_an_idle_worker_without_waiting_for_its_poll(
    pool: asyncpg.Pool, conn: asyncpg.Connection
) -> None:
    (memory_id,) = await seed_memories(conn, ["wake up"])
    done = asyncio.Event()

    async def handler(jobs: Sequence[Job]) -> None:
        done.set()

    worker = JobWorker(pool, JobSettings(workers=2, poll_interval_s=60))
    worker.register(TEST_KIND, handler)
    await worker.start()
    try:
        await asyncio.sleep(0.2)  # both loops are idle now, for a minute
        await enqueue(pool, worker, [NewJob(TEST_KIND, memory_id)])
        worker.queue.wake()
        await asyncio.wait_for(done.wait(), 5)
    finally:
        await worker.stop(grace_s=5)
    assert await conn.fetchval("SELECT count(*) FROM jobs") == 0


async def test_a_purge_cascades_its_jobs_and_a_deleted_memorys_job_does_nothing(
    settings: Settings, embedder: LocalEmbedder, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    async with app_client(settings.model_copy(update={"jobs": QUICK}), embedder) as client:
        ids = []
        for text in ["Zephyr owns the Quokka rollout.", "Lisbon hosts the Quokka cluster."]:
            response = await client.post("/v1/memories", json={"content": text}, headers=alice)
            assert response.status_code == 201, response.text
            ids.append(response.json()["id"])
        assert [(r["kind"], r["state"]) for r in (await job_rows(conn)).values()] == [
            (INDEX_JOB, "queued")
        ] * 2
        assert (await client.delete(f"/v1/memories/{ids[0]}?purge=true", headers=alice)).status_code == 204
        kept = await internal_id(conn, ids[1])  # jobs name memories by their internal id
        assert (await client.delete(f"/v1/memories/{ids[1]}", headers=alice)).status_code == 204
        assert list(await job_rows(conn)) == [kept], "the purge took its job with it"
        await drain(client)
    assert await conn.fetchval("SELECT count(*) FROM jobs") == 0
    assert await conn.fetchval("SELECT count(*) FROM memory_concepts") == 0
    assert await conn.fetchval("SELECT count(*) FROM concepts") == 0


async def test_the_migration_queues_indexing_for_memories_whose_indexing_was_lost(
    fresh_database: str,
) -> None:
    """Before the queue, a crash could lose a memory's indexing for good; upgrading repairs it."""
    upgrade_to_head(fresh_database, 384)
    downgrade_to(fresh_database, "0004")
    conn = await asyncpg.connect(fresh_database)
    try:
        lost, secret, gone = await seed_memories(conn, ["Zephyr owns Quokka.", "Vault key", "Old note"])
        await conn.execute("UPDATE memories SET is_sensitive = true WHERE id = $1", secret)
        await conn.execute("UPDATE memories SET deleted_at = now() WHERE id = $1", gone)
        upgrade_to_head(fresh_database, 384)
        jobs = await conn.fetch("SELECT kind, memory_id, state FROM jobs")
    finally:
        await conn.close()
    assert [tuple(r) for r in jobs] == [(INDEX_JOB, lost, "queued")]


# --- the contract, through the app -----------------------------------------------------------------


async def test_a_store_commits_its_indexing_job_and_the_worker_links_it(
    settings: Settings, embedder: LocalEmbedder, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    async with app_client(settings.model_copy(update={"jobs": QUICK}), embedder) as client:
        body = {"content": "Zephyr leads the Quokka migration.", "namespace": "g"}
        stored = (await client.post("/v1/memories", json=body, headers=alice)).json()
        again = await client.post("/v1/memories", json=body, headers=alice)
        assert again.json()["duplicate"] is True
        secret = await client.post(
            "/v1/memories", json={"content": "Vault token hunter2", "is_sensitive": True}, headers=alice
        )
        assert secret.status_code == 201
        memory = await internal_id(conn, stored["id"])  # what jobs and links name it by
        # committed with the memory, nothing run yet (no worker loops in this app)
        jobs = await job_rows(conn)
        assert list(jobs) == [memory], "one job: none for the duplicate or the sensitive memory"
        assert (jobs[memory]["kind"], jobs[memory]["state"]) == (INDEX_JOB, "queued")
        assert await conn.fetchval("SELECT count(*) FROM memory_concepts") == 0
        await drain(client)
    names = {
        r["name"]
        for r in await conn.fetch(
            "SELECT c.name FROM memory_concepts mc JOIN concepts c ON c.id = mc.concept_id "
            "WHERE mc.memory_id = $1",
            memory,
        )
    }
    assert {"zephyr", "quokka"} <= names
    assert await conn.fetchval("SELECT count(*) FROM jobs") == 0


@pytest.fixture
def fake384() -> Iterator[FakeEmbeddingServer]:
    with FakeEmbeddingServer(dimension=384) as server:
        yield server


async def test_memories_stored_during_an_outage_are_embedded_once_the_provider_is_back(
    db_url: str, fake384: FakeEmbeddingServer, conn: asyncpg.Connection
) -> None:
    embedder = await openai_compatible(fake384.url, 384)
    headers = await headers_for(db_url, "alice")
    fake384.behaviour.always = 503
    async with app_client(hosted(db_url, fake384), embedder) as client:
        stored = await client.post(
            "/v1/memories",
            json=[{"content": "Deploys go through Terraform."}, {"content": "Staging runs Postgres 18."}],
            headers=headers,
        )
        assert [r["embedded"] for r in stored.json()["results"]] == [False, False]
        secret = await client.post(
            "/v1/memories", json={"content": "vault key 7f3a", "is_sensitive": True}, headers=headers
        )
        assert secret.json()["embedded"] is False
        ids = await internal_ids(conn, [r["id"] for r in stored.json()["results"]])  # the jobs' ids
        embeds = {m: r for m, r in (await job_rows(conn)).items() if r["kind"] == EMBED_JOB}
        # the store's own try was the first attempt: each job waits out its backoff, error recorded
        assert sorted(embeds) == ids, "no embedding job for a sensitive memory no model may see"
        assert all(r["attempts"] == 1 and r["backoff_s"] == 1.0 for r in embeds.values())
        assert all("503" in r["last_error"] for r in embeds.values())

        await drain(client)  # indexing runs; the embedding jobs are not due yet
        assert await conn.fetchval("SELECT count(*) FROM memories WHERE embedding IS NULL") == 3
        fake384.reset()  # the provider is back ...
        await conn.execute("UPDATE jobs SET run_after = now()")  # ... and the backoff has passed
        await drain(client)
    rows = await conn.fetch("SELECT id, embedding_model FROM memories ORDER BY id")
    models = [(r["id"], r["embedding_model"]) for r in rows]
    secret_id = await internal_id(conn, secret.json()["id"])
    assert models == [(ids[0], "fake-384"), (ids[1], "fake-384"), (secret_id, None)]
    assert await conn.fetchval("SELECT count(*) FROM jobs") == 0
    assert b"7f3a" not in fake384.raw_bodies()
    await embedder.close()


async def test_start_up_enqueues_unembedded_memories_and_revives_failed_jobs_but_not_sensitive_ones(
    db_url: str, fake384: FakeEmbeddingServer, conn: asyncpg.Connection
) -> None:
    imported = await seed_memories(conn, ["imported one", "imported two"])
    (failed,) = await seed_memories(conn, ["gave up during a long outage"])
    (secret,) = await seed_memories(conn, ["vault key 7f3a"], is_sensitive=True)
    await conn.execute(
        "INSERT INTO jobs (kind, memory_id, state, attempts, last_error) "
        "VALUES ($1, $2, 'failed', 10, 'EmbeddingError: gave up')",
        EMBED_JOB,
        failed,
    )
    embedder = await openai_compatible(fake384.url, 384)
    async with app_client(hosted(db_url, fake384), embedder) as client:
        jobs = await job_rows(conn)
        assert sorted(jobs) == sorted([*imported, failed]), "no job for the sensitive memory"
        assert {(r["kind"], r["state"], r["attempts"]) for r in jobs.values()} == {(EMBED_JOB, "queued", 0)}
        await drain(client)
    embedded = await conn.fetch("SELECT id FROM memories WHERE embedding IS NOT NULL ORDER BY id")
    assert [r["id"] for r in embedded] == sorted([*imported, failed])
    assert await conn.fetchval("SELECT embedding IS NULL FROM memories WHERE id = $1", secret)
    assert await conn.fetchval("SELECT count(*) FROM jobs") == 0
    assert b"7f3a" not in fake384.raw_bodies()
    await embedder.close()


async def test_an_embedding_job_for_a_sensitive_memory_ends_without_sending_it(
    db_url: str, fake384: FakeEmbeddingServer, conn: asyncpg.Connection
) -> None:
    (secret,) = await seed_memories(conn, ["vault key 7f3a"], is_sensitive=True)
    await conn.execute("INSERT INTO jobs (kind, memory_id) VALUES ($1, $2)", EMBED_JOB, secret)
    embedder = await openai_compatible(fake384.url, 384)
    async with app_client(hosted(db_url, fake384), embedder) as client:
        await drain(client)
    assert await conn.fetchval("SELECT count(*) FROM jobs") == 0
    assert fake384.requests == []
    await embedder.close()


# --- store raced by delete / purge / change --------------------------------------------------------

LANES = 8
ROUNDS_PER_LANE = 25  # 200 rounds
ACTIONS = ("delete", "purge", "patch", "keep")
SHARED = ["Zephyr", "Quokka", "Lisbon", "Kafka", "Pulsar"]  # concepts every lane writes to


def _content(lane: int, round_no: int, edit: bool = False) -> str:
    a, b = SHARED[round_no % 5], SHARED[(round_no + lane) % 5]
    verb = "replaced" if edit else "deployed"
    return f"{a} {verb} {b} for Project{lane}x{round_no} in the Staging cluster."


async def _lane(http: httpx.AsyncClient, headers: dict[str, str], lane: int) -> list[tuple[str, int]]:
    """Store a memory, then at once delete, purge or change it; returns (what, status) of each call."""
    seen: list[tuple[str, int]] = []
    for round_no in range(ROUNDS_PER_LANE):
        body = {"content": _content(lane, round_no), "namespace": "race", "tags": [f"lane{lane}"]}
        stored = await http.post("/v1/memories", json=body, headers=headers)
        seen.append(("store", stored.status_code))
        if stored.status_code != 201:
            continue
        memory_id = stored.json()["id"]
        action = ACTIONS[round_no % len(ACTIONS)]
        if action == "delete":
            response = await http.delete(f"/v1/memories/{memory_id}", headers=headers)
        elif action == "purge":
            response = await http.delete(f"/v1/memories/{memory_id}?purge=true", headers=headers)
        elif action == "patch":
            change = {"content": _content(lane, round_no, edit=True), "tags": ["edited"]}
            response = await http.patch(f"/v1/memories/{memory_id}", json=change, headers=headers)
        else:
            continue
        seen.append((action, response.status_code))
    return seen


async def _assert_graph_matches_the_memories(conn: asyncpg.Connection) -> None:
    """Every live memory is linked to exactly what it says now, every other memory to nothing, and
    every count (doc_freq, graph_memories, edge weights and evidence) agrees with the links."""
    live = await conn.fetch(
        "SELECT id, content, tags, expanded_keywords FROM memories WHERE deleted_at IS NULL ORDER BY id"
    )
    linked: dict[int, set[str]] = {}
    for r in await conn.fetch(
        "SELECT mc.memory_id, c.name FROM memory_concepts mc JOIN concepts c ON c.id = mc.concept_id"
    ):
        linked.setdefault(r["memory_id"], set()).add(r["name"])
    expected = {
        r["id"]: {c.name for c in extract_concepts(r["content"], r["tags"], r["expanded_keywords"], 12)}
        for r in live
    }
    lost = [m for m in expected if m not in linked]
    assert not lost, f"acknowledged memories without concept links: {lost}"
    assert linked == expected, "links differ from what the memories say now"

    miscounted = await conn.fetch(
        "SELECT c.name, c.doc_freq, count(mc.memory_id) AS links "
        "FROM concepts c LEFT JOIN memory_concepts mc ON mc.concept_id = c.id GROUP BY c.id "
        "HAVING c.doc_freq <> count(mc.memory_id) OR count(mc.memory_id) = 0"
    )
    assert miscounted == [], "doc_freq must count links; a concept without links must be gone"
    assert (
        await conn.fetch(
            "SELECT n.name FROM namespaces n WHERE n.graph_memories <> (SELECT count(DISTINCT mc.memory_id) "
            "FROM memory_concepts mc JOIN memories m ON m.id = mc.memory_id WHERE m.namespace_id = n.id)"
        )
        == []
    )
    pairs = await conn.fetch(
        "SELECT a.concept_id AS s, b.concept_id AS t, count(*) AS n, array_agg(a.memory_id) AS evidence "
        "FROM memory_concepts a JOIN memory_concepts b "
        "ON a.memory_id = b.memory_id AND a.concept_id < b.concept_id GROUP BY 1, 2"
    )
    edges = await conn.fetch("SELECT source_id, target_id, weight, evidence_memory_ids FROM concept_edges")
    assert {(e["source_id"], e["target_id"]): e["weight"] for e in edges} == {
        (p["s"], p["t"]): p["n"] for p in pairs
    }
    evidence = {(p["s"], p["t"]): set(p["evidence"]) for p in pairs}
    for e in edges:
        assert set(e["evidence_memory_ids"]) <= evidence[(e["source_id"], e["target_id"])]


async def test_store_then_delete_purge_or_change_at_once_never_fails_nor_leaves_half_done_indexing(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    """Issue #15: the after-commit indexing deadlocked with a delete of the same memory (500s) and
    lost indexings. Eight lanes race on the app's own loop, with the worker pool running."""
    app = client.app

    async def race() -> list[list[tuple[str, int]]]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://memoria.test") as http:
            return await asyncio.gather(*(_lane(http, alice, lane) for lane in range(LANES)))

    lanes = await asyncio.to_thread(client.blocking_portal.call, race)
    calls = [call for lane in lanes for call in lane]
    assert [c for c in calls if c[1] >= 500] == [], "no request may fail"
    actions = Counter(ACTIONS[r % len(ACTIONS)] for r in range(ROUNDS_PER_LANE))
    expected = Counter({"store": ROUNDS_PER_LANE, **actions})
    del expected["keep"]
    assert Counter(what for what, _ in calls) == Counter({k: n * LANES for k, n in expected.items()})
    assert {status for what, status in calls if what == "store"} == {201}
    assert {status for what, status in calls if what in ("delete", "purge")} == {204}
    assert {status for what, status in calls if what == "patch"} == {200}
    await drain(client)
    assert await conn.fetchval("SELECT count(*) FROM jobs") == 0
    live = await conn.fetchval("SELECT count(*) FROM memories WHERE deleted_at IS NULL")
    assert live == (actions["patch"] + actions["keep"]) * LANES
    await _assert_graph_matches_the_memories(conn)
