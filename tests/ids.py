"""The internal id behind a public one, for tests that look at internal tables.

The API shows and takes a memory's `public_id` only; jobs, graph links and sealed secrets refer to
its internal `id` (migration 0008).
"""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg


async def internal_id(conn: asyncpg.Connection | asyncpg.Pool, public_id: int) -> int:
    """The internal id of the memory whose public id is `public_id` (which must exist)."""
    value = await conn.fetchval("SELECT id FROM memories WHERE public_id = $1", public_id)
    assert value is not None, f"no memory has public id {public_id}"
    return int(value)


async def internal_ids(conn: asyncpg.Connection | asyncpg.Pool, public_ids: Sequence[int]) -> list[int]:
    """`internal_id` of each, in the same order."""
    return [await internal_id(conn, public_id) for public_id in public_ids]


async def public_id(conn: asyncpg.Connection | asyncpg.Pool, internal: int) -> int:
    """The public id of the memory whose internal id is `internal` (which must exist)."""
    value = await conn.fetchval("SELECT public_id FROM memories WHERE id = $1", internal)
    assert value is not None, f"no memory has id {internal}"
    return int(value)
