"""Read and write sealed originals inside the caller's transaction (the memory write's own)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import asyncpg

from app.secrets import sql
from app.secrets.vault import SealedSecret


def _record(row: asyncpg.Record) -> SealedSecret:
    return SealedSecret(
        memory_id=row["memory_id"],
        ordinal=row["ordinal"],
        kind=row["kind"],
        key_id=row["key_id"],
        nonce=bytes(row["nonce"]),
        ciphertext=bytes(row["ciphertext"]),
    )


async def insert_sealed(conn: asyncpg.Connection, rows: Sequence[SealedSecret]) -> None:
    """Store `rows` (any memories) in one statement; nothing to do for none (no key configured)."""
    if not rows:
        return
    await conn.execute(
        sql.INSERT_SEALED,
        [row.memory_id for row in rows],
        [row.ordinal for row in rows],
        [row.kind for row in rows],
        [row.key_id for row in rows],
        [row.nonce for row in rows],
        [row.ciphertext for row in rows],
    )


async def read_sealed(conn: asyncpg.Connection, memory_id: int) -> list[SealedSecret]:
    """The sealed originals of one memory, by ordinal (the caller has checked who owns it)."""
    return [_record(row) for row in await conn.fetch(sql.SELECT_SEALED, memory_id)]


async def keep_sealed(conn: asyncpg.Connection, memory_id: int, ordinals: Iterable[int]) -> int:
    """Delete the memory's sealed originals whose number is not in `ordinals` (the placeholders its
    edited text still holds, `placeholders_in`); the number deleted."""
    status = await conn.execute(sql.DELETE_SEALED_EXCEPT, memory_id, sorted(set(ordinals)))
    return int(status.split()[-1])


async def count_by_key(conn: asyncpg.Connection) -> dict[str, int]:
    """How many sealed originals each key id holds."""
    return {row["key_id"]: row["n"] for row in await conn.fetch(sql.COUNT_BY_KEY)}


async def next_to_rotate(
    conn: asyncpg.Connection, active_key_id: str, after: tuple[int, int], limit: int
) -> list[SealedSecret]:
    rows = await conn.fetch(sql.NEXT_TO_ROTATE, active_key_id, after[0], after[1], limit)
    return [_record(row) for row in rows]


async def reseal_rows(conn: asyncpg.Connection, rows: Sequence[SealedSecret]) -> None:
    if not rows:
        return
    await conn.execute(
        sql.RESEAL,
        [row.memory_id for row in rows],
        [row.ordinal for row in rows],
        [row.key_id for row in rows],
        [row.nonce for row in rows],
        [row.ciphertext for row in rows],
    )
