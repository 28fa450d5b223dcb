"""A read-only transaction whose BEGIN carries the transaction's SET LOCAL lines."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg


@asynccontextmanager
async def read_only_transaction(conn: asyncpg.Connection, set_local: str) -> AsyncIterator[None]:
    """BEGIN READ ONLY plus `set_local` in one simple-query round trip; COMMIT, or ROLLBACK on error.

    asyncpg's `conn.transaction()` spends a round trip on BEGIN alone, and recall would spend another
    on its SET LOCAL lines. `set_local` must be trusted SQL (validated settings, never user text).
    """
    try:
        await conn.execute(f"BEGIN READ ONLY; {set_local}")
        yield
    except BaseException:
        if not conn.is_closed() and conn.is_in_transaction():
            with contextlib.suppress(Exception):  # a broken connection: the pool discards it
                await conn.execute("ROLLBACK")
        raise
    await conn.execute("COMMIT")
