"""Transactions whose BEGIN carries their SET LOCAL lines: one round trip instead of two."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg


@asynccontextmanager
async def transaction_with(conn: asyncpg.Connection, set_local: str, read_only: bool) -> AsyncIterator[None]:
    """BEGIN plus `set_local` in one simple-query round trip; COMMIT, or ROLLBACK on error.

    asyncpg's `conn.transaction()` spends a round trip on BEGIN alone, and the SET LOCAL lines would
    take another. `set_local` must be trusted SQL (validated settings, never user text).
    """
    begin = "BEGIN READ ONLY" if read_only else "BEGIN"
    try:
        await conn.execute(f"{begin}; {set_local}")
        yield
    except BaseException:
        if not conn.is_closed() and conn.is_in_transaction():
            with contextlib.suppress(Exception):  # a broken connection: the pool discards it
                await conn.execute("ROLLBACK")
        raise
    await conn.execute("COMMIT")


def read_only_transaction(
    conn: asyncpg.Connection, set_local: str
) -> contextlib.AbstractAsyncContextManager[None]:
    return transaction_with(conn, set_local, read_only=True)
