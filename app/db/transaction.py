"""Transactions whose BEGIN carries their SET LOCAL lines: one round trip instead of two."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg

# A ROLLBACK after a statement failed: the server has just answered, so this is generous; past it
# the connection is closed instead (the server then rolls back on its own).
ROLLBACK_TIMEOUT_S = 2.0


@asynccontextmanager
async def transaction_with(conn: asyncpg.Connection, set_local: str, read_only: bool) -> AsyncIterator[None]:
    """BEGIN plus `set_local` in one simple-query round trip; COMMIT, or ROLLBACK on error.

    asyncpg's `conn.transaction()` spends a round trip on BEGIN alone, and the SET LOCAL lines would
    take another. `set_local` must be trusted SQL (validated settings, never user text).

    A block left by cancellation or a timeout (a deadline, a hung server) is not rolled back: the
    statement it interrupted may still be running, and asyncpg would first wait for the server to
    acknowledge its cancel, which a hung server never does. The connection is terminated instead
    (PostgreSQL rolls back the transaction of a client that left; a pool opens a new connection).
    """
    begin = "BEGIN READ ONLY" if read_only else "BEGIN"
    try:
        await conn.execute(f"{begin}; {set_local}")
        yield
    except (asyncio.CancelledError, TimeoutError):
        with contextlib.suppress(asyncpg.InterfaceError):  # a pool connection already released
            conn.terminate()
        raise
    except BaseException:
        if _open_in_transaction(conn):
            try:
                await conn.execute("ROLLBACK", timeout=ROLLBACK_TIMEOUT_S)
            except Exception:  # a broken or unanswering connection: close it, the pool discards it
                with contextlib.suppress(asyncpg.InterfaceError):
                    conn.terminate()
        raise
    await conn.execute("COMMIT")


def _open_in_transaction(conn: asyncpg.Connection) -> bool:
    """Whether `conn` still holds an open transaction to roll back. A pool's connection that was
    released while the block failed (its connection lost) raises on every call: nothing to roll back,
    and the block's own error, not that one, is what the caller must see."""
    try:
        return not conn.is_closed() and conn.is_in_transaction()
    except asyncpg.InterfaceError:
        return False


def read_only_transaction(
    conn: asyncpg.Connection, set_local: str
) -> contextlib.AbstractAsyncContextManager[None]:
    return transaction_with(conn, set_local, read_only=True)
