"""Pooler safety, proven against a real PgBouncer 1.18 in transaction pooling mode.

Production runs behind PgBouncer in transaction mode: consecutive transactions of one client may
run on different server connections, and one server connection serves many clients. So per-request
planner settings (`hnsw.ef_search`, `hnsw.iterative_scan`, ...) must be `SET LOCAL` inside the
transaction that uses them: a session-level `SET` stays on the server connection and leaks into
whichever client gets it next. These tests always run through PgBouncer (started by the session
`pgbouncer` fixture, whether or not PGBOUNCER_TESTS is set) and fail when it is not installed.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
import httpx
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.db.urls import database_of
from app.embeddings import LocalEmbedder
from app.factory import create_app
from app.settings import RecallSettings, Settings
from tests.pgbouncer import PgBouncer, find_pgbouncer

Client = AsyncTestClient[Litestar]

WORKERS = 16
ITERATIONS = 50

#: The settings a transaction can change and another client must never see. The `'[1]'::vector`
#: literal makes the backend load pgvector while the statement is parsed, so `hnsw.*` report
#: pgvector's real defaults (not empty placeholders) on every server connection PgBouncer picks.
PROBE = """
SELECT current_setting('hnsw.ef_search') AS ef_search,
       current_setting('hnsw.iterative_scan') AS iterative_scan,
       current_setting('hnsw.max_scan_tuples') AS max_scan_tuples,
       current_setting('statement_timeout') AS statement_timeout,
       pg_backend_pid() AS pid,
       '[1]'::vector IS NOT NULL AS vector_loaded
"""


def settings_of(row: asyncpg.Record) -> dict[str, str]:
    return {k: row[k] for k in ("ef_search", "iterative_scan", "max_scan_tuples", "statement_timeout")}


@pytest.fixture
def app_db_url(pgbouncer_db_url: str) -> str:
    """Every app in this module goes through PgBouncer, whether or not PGBOUNCER_TESTS is set."""
    return pgbouncer_db_url


@pytest.fixture
async def defaults(db_url: str) -> dict[str, str]:
    """The server defaults, read on a direct (unpooled) connection."""
    direct = await asyncpg.connect(db_url)
    try:
        return settings_of(await direct.fetchrow(PROBE))
    finally:
        await direct.close()


@pytest.fixture
async def pooled(pgbouncer_db_url: str) -> AsyncIterator[asyncpg.Pool]:
    """An asyncpg pool of WORKERS client connections through PgBouncer, configured like the app's."""
    pool = await asyncpg.create_pool(
        pgbouncer_db_url, min_size=WORKERS, max_size=WORKERS, statement_cache_size=0
    )
    yield pool
    await pool.close()


async def probe_every_server_connection(url: str, pool_size: int) -> list[asyncpg.Record]:
    """PROBE from `pool_size` transactions held open at once.

    PgBouncer never opens more than `pool_size` server connections for one database, so while all
    these transactions are open they occupy every server connection there is: whatever state any
    of them carries is seen here.
    """
    clients = [await asyncpg.connect(url, statement_cache_size=0) for _ in range(pool_size)]
    barrier = asyncio.Barrier(pool_size)

    async def one(client: asyncpg.Connection) -> asyncpg.Record:
        async with client.transaction():
            row = await client.fetchrow(PROBE)
            await barrier.wait()  # nobody commits (and frees its server) before all hold one
            return row

    try:
        rows = await asyncio.wait_for(asyncio.gather(*(one(c) for c in clients)), 30)
    finally:
        await asyncio.gather(*(c.close() for c in clients))
    assert len({r["pid"] for r in rows}) == pool_size
    return list(rows)


def test_pgbouncer_is_installed() -> None:
    """A missing PgBouncer is a failure with an install hint, never a silent skip."""
    find_pgbouncer()


async def test_set_local_never_leaks_between_pooled_clients(
    pooled: asyncpg.Pool, defaults: dict[str, str], pgbouncer: PgBouncer, pgbouncer_db_url: str
) -> None:
    assert defaults["ef_search"] == "40" and defaults["iterative_scan"] == "off"
    mismatches: list[str] = []
    workers_per_server: dict[int, set[int]] = defaultdict(set)

    async def worker(worker_id: int) -> None:
        ef_search = 100 + worker_id  # distinct per worker and never the default
        for iteration in range(ITERATIONS):
            async with pooled.acquire() as conn:
                async with conn.transaction():
                    await conn.execute(f"SET LOCAL hnsw.ef_search = {ef_search}")
                    await conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                    await asyncio.sleep(0)  # let the other workers interleave mid-transaction
                    inside = await conn.fetchrow(PROBE)
                workers_per_server[inside["pid"]].add(worker_id)
                if (inside["ef_search"], inside["iterative_scan"]) != (str(ef_search), "relaxed_order"):
                    mismatches.append(f"worker {worker_id} #{iteration} inside: {settings_of(inside)}")
                outside = await conn.fetchrow(PROBE)  # autocommit: any server connection
                if settings_of(outside) != defaults:
                    mismatches.append(f"worker {worker_id} #{iteration} outside: {settings_of(outside)}")

    await asyncio.wait_for(asyncio.gather(*(worker(i) for i in range(WORKERS))), 120)

    assert not mismatches, f"{len(mismatches)} leaks/mismatches, e.g. {mismatches[:5]}"
    # The proof only counts if many client connections really shared few server connections.
    clients = [c for c in pgbouncer.admin("SHOW CLIENTS") if c["database"] == database_of(pgbouncer_db_url)]
    assert len(clients) >= WORKERS
    assert len(workers_per_server) <= pgbouncer.default_pool_size < WORKERS
    assert max(len(workers) for workers in workers_per_server.values()) > 1


async def test_session_level_set_would_leak_through_transaction_pooling(
    pgbouncer_db_url: str, defaults: dict[str, str], pgbouncer: PgBouncer
) -> None:
    """Why recall uses SET LOCAL: a plain SET sticks to the server connection, not to the client."""
    size = pgbouncer.default_pool_size
    setter = await asyncpg.connect(pgbouncer_db_url, statement_cache_size=0)
    try:
        async with setter.transaction():
            await setter.execute("SET LOCAL hnsw.ef_search = 321")
        seen = [settings_of(r) for r in await probe_every_server_connection(pgbouncer_db_url, size)]
        assert all(s == defaults for s in seen), seen

        await setter.execute("SET hnsw.ef_search = 321")  # session level, outside any transaction
        seen = [settings_of(r) for r in await probe_every_server_connection(pgbouncer_db_url, size)]
        leaked = [s for s in seen if s["ef_search"] == "321"]
        assert len(leaked) == 1, f"expected the SET to leak to exactly one server connection: {seen}"
    finally:
        await setter.close()  # the polluted server connection is dropped by the fixture's KILL


async def test_store_and_read_back_through_pgbouncer(
    client: Client,
    alice: dict[str, str],
    settings: Settings,
    pgbouncer: PgBouncer,
    pgbouncer_db_url: str,
    conn: asyncpg.Connection,
) -> None:
    assert settings.database.url == pgbouncer_db_url and settings.database.statement_cache_size == 0
    body = {"content": "Deploys go through PgBouncer", "namespace": "ops", "tags": ["db"], "importance": 0.7}
    created = await client.post("/v1/memories", json=body, headers=alice)
    assert created.status_code == 201, created.text
    memory_id = created.json()["id"]
    read = await client.get(f"/v1/memories/{memory_id}", headers=alice)
    assert read.status_code == 200, read.text
    assert read.json()["content"] == body["content"] and read.json()["tags"] == ["db"]

    batch = [{"content": f"fact {i}", "namespace": "ops"} for i in range(24)]
    stored = await client.post("/v1/memories", json=batch, headers=alice)
    assert stored.status_code == 201, stored.text
    listed = await client.get("/v1/memories", params={"namespace": "ops", "limit": 100}, headers=alice)
    assert listed.status_code == 200 and len(listed.json()["items"]) == 25, listed.text
    patched = await client.patch(f"/v1/memories/{memory_id}", json={"importance": 1.0}, headers=alice)
    assert patched.status_code == 200, patched.text
    deleted = await client.delete(f"/v1/memories/{memory_id}", headers=alice)
    assert deleted.status_code == 204, deleted.text
    namespaces = await client.get("/v1/namespaces", headers=alice)
    assert namespaces.status_code == 200, namespaces.text

    # committed for real: a direct connection sees what went in through the pooler
    assert await conn.fetchval("SELECT count(*) FROM memories WHERE deleted_at IS NULL") == 24
    assert await conn.fetchval("SELECT importance FROM memories WHERE public_id = $1", memory_id) == 1.0
    # and it did go through PgBouncer
    database = database_of(pgbouncer_db_url)
    assert pgbouncer.servers(database), "PgBouncer holds no server connection to the test database"
    assert any(c["database"] == database for c in pgbouncer.admin("SHOW CLIENTS"))


@asynccontextmanager
async def serve(app: Litestar) -> AsyncIterator[httpx.AsyncClient]:
    """The app and its lifespan on this event loop, so requests really run concurrently.

    (`AsyncTestClient` runs each request synchronously in a portal thread: "concurrent" requests
    are serialised, and they block the loop other pooled clients run on.)
    """
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with app.lifespan(), httpx.AsyncClient(transport=transport, base_url="http://memoria.test") as http:
        yield http


async def test_concurrent_recalls_with_different_settings_leak_nothing(
    settings: Settings,
    embedder: LocalEmbedder,
    alice: dict[str, str],
    pooled: asyncpg.Pool,
    defaults: dict[str, str],
    pgbouncer: PgBouncer,
    pgbouncer_db_url: str,
) -> None:
    """Two apps with different recall settings serve concurrent stores and recalls on one database
    through PgBouncer while other clients probe outside transactions: nobody ever sees a recall's
    SET LOCAL values, although they all share a handful of server connections."""
    recall_settings = {
        111: RecallSettings(ef_search=111, iterative_scan="strict_order", statement_timeout_ms=4321),
        222: RecallSettings(ef_search=222, iterative_scan="relaxed_order", max_scan_tuples=12345),
    }
    apps = {
        ef: create_app(
            Settings(database=settings.database, embeddings=settings.embeddings, recall=recall),
            embedder=embedder,
        )
        for ef, recall in recall_settings.items()
    }
    done = asyncio.Event()
    probes: list[dict[str, str]] = []

    async def prober() -> None:
        while not done.is_set():
            probes.append(settings_of(await pooled.fetchrow(PROBE)))
            await asyncio.sleep(0)

    async with serve(apps[111]) as first, serve(apps[222]) as second:
        clients = {111: first, 222: second}

        async def store(i: int) -> httpx.Response:
            body = {"content": f"runbook step {i}: restart the pooler", "namespace": "ops"}
            return await clients[111 if i % 2 else 222].post("/v1/memories", json=body, headers=alice)

        async def recall(ef: int, i: int) -> tuple[int, httpx.Response]:
            body = {"query": f"how do I restart the pooler {i}", "namespace": "ops", "explain": True}
            return ef, await clients[ef].post("/v1/recall", json=body, headers=alice)

        first_store = await store(0)  # creates the namespace the recalls are scoped to
        assert first_store.status_code == 201, first_store.text
        probers = [asyncio.create_task(prober()) for _ in range(WORKERS // 2)]
        try:
            stores, answers = await asyncio.wait_for(
                asyncio.gather(
                    asyncio.gather(*(store(i) for i in range(1, 24))),
                    asyncio.gather(*(recall(ef, i) for i in range(24) for ef in (111, 222))),
                ),
                120,
            )
        finally:
            done.set()
            await asyncio.gather(*probers)

    assert all(r.status_code == 201 for r in stores), [r.text for r in stores if r.status_code != 201]
    for ef, response in answers:
        assert response.status_code == 200, response.text
        out = response.json()
        assert out["results"] and out["settings"]["ef_search"] == ef
    assert len(probes) >= WORKERS
    leaks = [p for p in probes if p != defaults]
    assert not leaks, f"{len(leaks)} of {len(probes)} probes saw recall settings: {leaks[:5]}"
    servers = pgbouncer.servers(database_of(pgbouncer_db_url))
    assert 0 < len(servers) <= pgbouncer.default_pool_size


@pytest.mark.parametrize("cache_size", [100, 0])
async def test_statement_cache_breaks_behind_transaction_pooling(
    pgbouncer_db_url: str, pgbouncer: PgBouncer, cache_size: int
) -> None:
    """The control for statement_cache_size=0: with asyncpg's cache on, a statement prepared on one
    server connection is later executed on another one, where it does not exist."""
    query = "SELECT pg_backend_pid()"
    client = await asyncpg.connect(pgbouncer_db_url, statement_cache_size=cache_size)
    holders: list[asyncpg.Connection] = []
    try:
        prepared_on = await client.fetchval(query)  # with the cache on: prepared (named) right there
        # Park that server connection inside another client's open transaction.
        for _ in range(pgbouncer.default_pool_size):
            holder = await asyncpg.connect(pgbouncer_db_url, statement_cache_size=0)
            holders.append(holder)
            await holder.execute("BEGIN")
            if await holder.fetchval(query) == prepared_on:
                break
        else:
            pytest.fail("could not pin the server connection the statement was prepared on")
        if cache_size:
            with pytest.raises(asyncpg.InvalidSQLStatementNameError, match="does not exist"):
                await client.fetchval(query)
        else:
            assert await client.fetchval(query) != prepared_on  # another server, and it just works
    finally:
        await asyncio.gather(*(c.close() for c in [client, *holders]))
