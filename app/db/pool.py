"""asyncpg pools owned by the app lifespan: one for writes, optionally one for read-only recall."""

from __future__ import annotations

import json
from dataclasses import dataclass

import asyncpg
from pgvector.asyncpg import register_vector

from app.db.settings import DatabaseSettings


async def _init_connection(conn: asyncpg.Connection) -> None:
    """Runs on every new pool connection: the pgvector codecs must exist before any query."""
    await register_vector(conn)
    await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")


class PooledConnection(asyncpg.Connection):  # type: ignore[misc]  # asyncpg ships no stubs
    """A pool connection released without asyncpg's reset query.

    asyncpg sends `pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL` on every release: one
    more round trip per request (two with authentication) on the recall hot path. The service keeps
    no session state on pooled connections: settings are SET LOCAL, advisory locks are
    transaction-scoped, and nothing LISTENs (behind a transaction-mode pooler session state would not
    survive anyway). An open transaction is still rolled back on release, by asyncpg itself.
    """

    def get_reset_query(self) -> str:
        return ""


# asyncpg leaves statements longer than 15 KiB out of its cache by default, and the recall
# statement is longer: uncached, it is parsed and planned again on every call (~5 ms).
MAX_CACHEABLE_STATEMENT_BYTES = 128 * 1024


async def _open_pool(url: str, settings: DatabaseSettings) -> asyncpg.Pool:
    return await asyncpg.create_pool(
        connection_class=PooledConnection,
        dsn=url,
        min_size=settings.pool_min_size,
        max_size=settings.pool_max_size,
        statement_cache_size=settings.statement_cache_size,
        max_cacheable_statement_size=MAX_CACHEABLE_STATEMENT_BYTES,
        command_timeout=settings.command_timeout_s,
        init=_init_connection,
    )


@dataclass(slots=True)
class Database:
    """The write pool and the pool recall reads from (the same pool unless a read URL is set)."""

    write: asyncpg.Pool
    read: asyncpg.Pool

    async def close(self) -> None:
        if self.read is not self.write:
            await self.read.close()
        await self.write.close()


async def create_database(url: str, settings: DatabaseSettings) -> Database:
    write = await _open_pool(url, settings)
    if not settings.read_url:
        return Database(write=write, read=write)
    try:
        read = await _open_pool(settings.read_url, settings)
    except BaseException:
        await write.close()
        raise
    return Database(write=write, read=read)
