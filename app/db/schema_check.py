"""Startup check: the database schema matches the configured embedder."""

from __future__ import annotations

import asyncpg


class SchemaMismatch(RuntimeError):
    """The service must not start against this database with this configuration."""


async def check_embedding_dimension(pool: asyncpg.Pool, model: str, dimension: int) -> None:
    exists = await pool.fetchval("SELECT to_regclass('memoria_meta') IS NOT NULL")
    if not exists:
        raise SchemaMismatch("the database has no Memoria schema: run `memoria migrate` first")
    recorded = await pool.fetchval("SELECT value FROM memoria_meta WHERE key = 'embedding_dimension'")
    if recorded is None or int(recorded) != dimension:
        raise SchemaMismatch(
            f"the database stores {recorded}-dimensional embeddings but the configured embedder "
            f"({model}) produces {dimension}-dimensional ones; configure a {recorded}-d model or "
            "re-embed with `memoria embeddings reembed`"
        )
