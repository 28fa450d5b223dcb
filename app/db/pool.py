"""asyncpg pools owned by the app lifespan: one for writes, optionally one for read-only recall."""

from __future__ import annotations

import json
from dataclasses import dataclass

import asyncpg
from pgvector.asyncpg import register_vector

from app.settings import DatabaseSettings


async def _init_connection(conn: asyncpg.Connection) -> None:
    """Runs on every new pool connection: the pgvector codecs must exist before any query."""
    await register_vector(conn)
    await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")


async def _open_pool(url: str, settings: DatabaseSettings) -> asyncpg.Pool:
    return await asyncpg.create_pool(
        dsn=url,
        min_size=settings.pool_min_size,
        max_size=settings.pool_max_size,
        statement_cache_size=settings.statement_cache_size,
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
