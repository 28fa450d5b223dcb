"""The warm-up: what recall reads is in memory before the service says ready, within a time bound."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import psycopg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.db.embedded import EmbeddedPostgres
from app.db.migrate import upgrade_to_head
from app.db.warmup import Warmer, warm_up

DIMENSION = 384
HEAP_SCAN = "EXPLAIN (ANALYZE, BUFFERS) SELECT count(*) FROM memories WHERE ctid >= '(0,0)'::tid"


@pytest.fixture
async def pool(db_url: str) -> AsyncIterator[asyncpg.Pool]:
    opened = await asyncpg.create_pool(db_url, min_size=1, max_size=2)
    yield opened
    await opened.close()


def _heap_pages_read_from_outside(url: str) -> int:
    """Pages of `memories` a full scan had to read into shared buffers (0: all were there)."""
    with psycopg.connect(url) as conn:
        plan = [str(row[0]) for row in conn.execute(HEAP_SCAN).fetchall()]
    buffers = next(line for line in plan if "Buffers:" in line)
    return sum(int(part.split("=")[1]) for part in buffers.split() if part.startswith("read="))


async def _warm(url: str, timeout_s: float) -> list[str]:
    pool = await asyncpg.create_pool(url, min_size=1, max_size=1)
    try:
        report = await warm_up(pool, timeout_s)
    finally:
        await pool.close()
    assert not report.cut_short, report.summary()
    return report.warmed


def test_after_a_restart_warm_up_puts_the_memories_heap_in_shared_buffers(tmp_path: Path) -> None:
    embedded = EmbeddedPostgres(tmp_path / "pgdata", "memoria", "32MB")
    url = embedded.start()
    try:
        upgrade_to_head(url, DIMENSION)
        with psycopg.connect(url) as conn:
            conn.execute("INSERT INTO users (name) VALUES ('warm')")
            conn.execute("INSERT INTO namespaces (user_id, name) SELECT id, 'ns' FROM users")
            conn.execute(
                "INSERT INTO memories (namespace_id, content, content_hash) "
                "SELECT n.id, 'memory ' || g || ' about ' || repeat(md5(g::text), 4), "
                "sha256(g::text::bytea) FROM namespaces n, generate_series(1, 3000) g"
            )
        embedded.stop()
        embedded.start()  # a new postmaster: shared buffers are empty
        assert _heap_pages_read_from_outside(url) > 50  # cold, and the check sees it

        embedded.stop()
        embedded.start()
        warmed = asyncio.run(_warm(url, timeout_s=30))
        assert {"memories", "memories_embedding_hnsw_idx", "memories_search_idx"} <= set(warmed)
        assert _heap_pages_read_from_outside(url) == 0
    finally:
        embedded.stop()


async def test_warm_up_stops_at_its_bound_when_a_table_stays_locked(
    pool: asyncpg.Pool, conn: asyncpg.Connection
) -> None:
    await conn.execute("BEGIN; LOCK TABLE concept_edges IN ACCESS EXCLUSIVE MODE")  # warmed last
    try:
        began = time.monotonic()
        report = await asyncio.wait_for(warm_up(pool, timeout_s=1.5), timeout=60)
        took = time.monotonic() - began
    finally:
        await conn.execute("ROLLBACK")
    assert report.cut_short == "the 1.5 s bound was reached"
    assert took < 1.5 + 5  # the bound plus honest slack for a loaded box; without it: the lock's lifetime
    assert {"namespaces_pkey", "memories_embedding_hnsw_idx"} <= set(report.warmed)  # those before it
    assert not [name for name in report.warmed if name.startswith("concept_edges")]


async def test_readyz_says_warming_up_until_the_warm_up_is_done(
    app: Litestar, client: AsyncTestClient[Litestar], conn: asyncpg.Connection, alice: dict[str, str]
) -> None:
    await conn.execute("UPDATE api_keys SET scopes = '{read,write,admin}'")  # the details need an admin key
    assert (await client.get("/readyz", headers=alice)).status_code == 200
    warmup: Warmer = app.state.warmup
    await conn.execute("BEGIN; LOCK TABLE concept_edges IN ACCESS EXCLUSIVE MODE")  # holds the warm-up up
    running = client.blocking_portal.start_task_soon(warmup.warm)  # on the app's own event loop
    try:
        for _ in range(100):  # bounded: 100 polls, 0.05 s apart
            ready = await client.get("/readyz", headers=alice)
            if ready.status_code == 503:
                break
            await asyncio.sleep(0.05)
        assert ready.status_code == 503
        assert ready.json()["checks"]["warmup"] == "warming up"
    finally:
        await conn.execute("ROLLBACK")
    await asyncio.wait_for(asyncio.wrap_future(running), timeout=60)
    assert (await client.get("/readyz")).status_code == 200


async def test_a_database_without_the_schema_is_left_alone(fresh_database: str) -> None:
    pool = await asyncpg.create_pool(fresh_database, min_size=1, max_size=1)
    try:
        report = await warm_up(pool, timeout_s=10)
    finally:
        await pool.close()
    assert report.warmed == []
    assert report.cut_short == ""
