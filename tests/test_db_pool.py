"""Pools and transactions: a release costs no round trip, and no transaction is ever left open."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest

from app.db import create_database, read_only_transaction, transaction_with
from app.settings import DatabaseSettings


async def _last_query_of(db_url: str, pid: int) -> str:
    """What backend `pid` ran last, seen from another connection."""
    observer = await asyncpg.connect(db_url)
    try:
        query: str = await observer.fetchval("SELECT query FROM pg_stat_activity WHERE pid = $1", pid)
        return query
    finally:
        await observer.close()


@pytest.fixture
async def pool(db_url: str) -> AsyncIterator[asyncpg.Pool]:
    """The service's pool with a single connection, so consecutive acquires get the same one."""
    db = await create_database(db_url, DatabaseSettings(url=db_url, pool_min_size=1, pool_max_size=1))
    yield db.write
    await db.close()


async def test_releasing_a_pooled_connection_sends_no_reset_query(pool: asyncpg.Pool, db_url: str) -> None:
    async with pool.acquire() as conn:
        pid = await conn.fetchval("SELECT pg_backend_pid() /* the last query */")
    assert await _last_query_of(db_url, pid) == "SELECT pg_backend_pid() /* the last query */"


async def test_a_transaction_left_open_is_rolled_back_on_release(pool: asyncpg.Pool) -> None:
    async with pool.acquire() as conn:
        await conn.execute("BEGIN; INSERT INTO users (name) VALUES ('left-open')")
        first_pid = await conn.fetchval("SELECT pg_backend_pid()")
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT pg_backend_pid()") == first_pid  # the same connection
        assert not conn.is_in_transaction()
        assert await conn.fetchval("SELECT count(*) FROM users WHERE name = 'left-open'") == 0


async def test_read_only_transaction_applies_its_settings_inside_it_only(conn: asyncpg.Connection) -> None:
    default = await conn.fetchval("SELECT current_setting('statement_timeout')")
    async with read_only_transaction(conn, "SET LOCAL statement_timeout = 1234"):
        assert conn.is_in_transaction()
        assert await conn.fetchval("SELECT current_setting('statement_timeout')") == "1234ms"
        assert await conn.fetchval("SELECT current_setting('transaction_read_only')") == "on"
    assert not conn.is_in_transaction()
    assert await conn.fetchval("SELECT current_setting('statement_timeout')") == default


async def test_read_only_transaction_rolls_back_when_its_block_fails(conn: asyncpg.Connection) -> None:
    with pytest.raises(asyncpg.ReadOnlySQLTransactionError):
        async with read_only_transaction(conn, "SET LOCAL statement_timeout = 1234"):
            await conn.execute("INSERT INTO users (name) VALUES ('read-only')")
    assert not conn.is_in_transaction()
    assert await conn.fetchval("SELECT count(*) FROM users") == 0


async def test_write_transaction_commits_with_its_settings_inside_it_only(conn: asyncpg.Connection) -> None:
    async with transaction_with(conn, "SET LOCAL synchronous_commit = off", read_only=False):
        assert await conn.fetchval("SELECT current_setting('synchronous_commit')") == "off"
        await conn.execute("INSERT INTO users (name) VALUES ('written')")
    assert not conn.is_in_transaction()
    assert await conn.fetchval("SELECT current_setting('synchronous_commit')") == "on"
    assert await conn.fetchval("SELECT count(*) FROM users WHERE name = 'written'") == 1


async def test_write_transaction_rolls_back_when_its_block_fails(conn: asyncpg.Connection) -> None:
    async def failing_block() -> None:
        async with transaction_with(conn, "SET LOCAL synchronous_commit = off", read_only=False):
            await conn.execute("INSERT INTO users (name) VALUES ('rolled-back')")
            raise RuntimeError("the block failed")

    with pytest.raises(RuntimeError):
        await failing_block()
    assert not conn.is_in_transaction()
    assert await conn.fetchval("SELECT count(*) FROM users") == 0


async def test_a_block_whose_pooled_connection_was_released_raises_its_own_error(pool: asyncpg.Pool) -> None:
    """A pool connection released while its transaction's block failed (as when the connection is
    lost under it) is not rolled back through: the block's error reaches the caller, not asyncpg's
    "connection has been released back to the pool"."""
    conn = await pool.acquire()

    async def fail_once_released() -> None:
        async with transaction_with(conn, "SET LOCAL synchronous_commit = off", read_only=False):
            await pool.release(conn)
            raise LookupError("the block's own error")

    with pytest.raises(LookupError, match="the block's own"):
        await fail_once_released()
    async with pool.acquire() as again:  # the pool still serves, with no transaction left open
        assert not again.is_in_transaction()
