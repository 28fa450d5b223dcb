"""asyncpg pools owned by the app lifespan: one for writes, optionally one for read-only recall."""

from __future__ import annotations

import asyncio
import contextlib
import json
import struct
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import asyncpg
import numpy as np
from pgvector.asyncpg import register_vector

from app.core import deadline
from app.db.replica import ReplicaRouter, RoutedReadPool
from app.db.settings import DatabaseSettings


def _float4_bytes(value: float) -> bytes:
    return struct.pack("!f", value)


def _float4_as_stored(data: bytes) -> float:
    """A `real` column as PostgreSQL prints it: `0.8`, not its widening to a double,
    `0.800000011920929`. The shortest decimal that reads back as the same 4-byte float (numpy's
    `str` of a float32, as PostgreSQL's own output) is the value a client stored."""
    return float(str(np.frombuffer(data, dtype=">f4")[0]))


async def _init_connection(conn: asyncpg.Connection) -> None:
    """Runs on every new pool connection: the pgvector codecs must exist before any query, and
    every `real` read (a memory's `importance`, in every answer that carries it) comes back as
    the value stored."""
    await register_vector(conn)
    await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")
    await conn.set_type_codec(
        "float4", encoder=_float4_bytes, decoder=_float4_as_stored, schema="pg_catalog", format="binary"
    )


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
# statement is longer: uncached, it is parsed and planned again on every call, a cost on every recall.
MAX_CACHEABLE_STATEMENT_BYTES = 128 * 1024


def _terminate(conn: Any) -> None:
    """Close a pool connection without a word to the server; the pool opens a new one when needed."""
    with contextlib.suppress(asyncpg.InterfaceError):  # already terminated inside the block
        conn.terminate()


# What leaves a connection unfit for the next request: an interrupted statement (below), or a protocol
# state asyncpg can no longer go on from (InternalClientError: PostgreSQL ended the session and its
# FATAL message came before the socket's end), which the reset-free release would hand on as it is.
_UNUSABLE = (asyncio.CancelledError, TimeoutError, asyncpg.InternalClientError)


class _BoundedAcquire:
    """`pool.acquire()` with a bounded wait, releasing an interrupted connection without waiting.

    A block left by cancellation or a timeout may have left a statement running. asyncpg's release
    would then cancel it and wait for the server to acknowledge, and `ROLLBACK` an open transaction:
    on a hung server both wait out the whole command timeout, holding up whoever is unwinding. Such a
    connection is terminated instead (a statement still running on a live server ends at its own
    `statement_timeout` or when it notices the client left).
    """

    __slots__ = ("_conn", "_inner", "_on_release")

    def __init__(self, inner: Any, on_release: Callable[[], None] | None = None) -> None:
        self._inner = inner
        self._conn: Any = None
        self._on_release = on_release

    async def __aenter__(self) -> Any:
        self._conn = await self._inner.__aenter__()
        return self._conn

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is not None and issubclass(exc_type, _UNUSABLE):
            _terminate(self._conn)
        await self._inner.__aexit__(exc_type, exc, tb)
        if exc_type is None and self._on_release is not None:
            self._on_release()

    def __await__(self) -> Any:  # `conn = await pool.acquire()`: the caller releases it
        return self._inner.__await__()


class BoundedPool(asyncpg.Pool):  # type: ignore[misc]  # asyncpg ships no stubs
    """An asyncpg pool whose `acquire` never waits longer than `acquire_timeout_s` nor past the
    current request's deadline (`app.core.deadline`), for every caller and for the pool's own
    `fetch`/`execute`/… shortcuts, which acquire through it. The wait includes opening a connection,
    so a server that accepts the socket and then never answers costs the bound, not asyncpg's 60 s.
    Past the bound it raises TimeoutError (the HTTP layer answers 503).
    """

    def __init__(self, *args: Any, acquire_timeout_s: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._acquire_timeout_s = acquire_timeout_s
        self.on_release: Callable[[], None] | None = None  # the write pool: a replica router notes writes

    def acquire(self, *, timeout: float | None = None) -> _BoundedAcquire:
        bound = deadline.remaining(self._acquire_timeout_s if timeout is None else timeout)
        # 0 would make asyncpg wait without a bound; a spent deadline fails at once instead
        return _BoundedAcquire(super().acquire(timeout=max(bound or 0.0, 0.001)), self.on_release)


async def _open_pool(url: str, settings: DatabaseSettings, *, replica: bool = False) -> asyncpg.Pool:
    """A replica's pool opens no connection up front (a dead replica must not stop the app starting)
    and waits for one at most `replica_acquire_timeout_s`."""
    pool = BoundedPool(
        url,
        acquire_timeout_s=settings.replica_acquire_timeout_s if replica else settings.acquire_timeout_s,
        connection_class=PooledConnection,
        record_class=asyncpg.Record,
        min_size=0 if replica else settings.pool_min_size,
        max_size=settings.pool_max_size,
        max_queries=50_000,  # asyncpg's defaults, which create_pool would pass
        max_inactive_connection_lifetime=300.0,
        loop=None,
        init=_init_connection,
        # connect arguments
        statement_cache_size=settings.statement_cache_size,
        max_cacheable_statement_size=MAX_CACHEABLE_STATEMENT_BYTES,
        command_timeout=settings.command_timeout_s,
        timeout=min(settings.connect_timeout_s, settings.replica_acquire_timeout_s)
        if replica
        else settings.connect_timeout_s,
    )
    await pool  # opens min_size connections, each within connect_timeout_s
    return pool


@dataclass(slots=True)
class Database:
    """The write pool and the pool reads go through: the same pool unless a read URL is set, else a
    `RoutedReadPool` choosing between the replica and the primary (`app.db.replica`)."""

    write: asyncpg.Pool
    read: Any
    replica: ReplicaRouter | None = None

    async def close(self) -> None:
        if self.replica is not None:
            await self.replica.close()
        await self.write.close()


async def create_database(url: str, settings: DatabaseSettings) -> Database:
    write = await _open_pool(url, settings)
    if not settings.read_url:
        return Database(write=write, read=write)
    try:
        replica = await _open_pool(settings.read_url, settings, replica=True)
    except BaseException:
        await write.close()
        raise
    router = ReplicaRouter(write, replica, settings)
    write.on_release = router.wrote
    await router.probe()  # reads use the replica from the first request when it is healthy
    router.start()
    return Database(write=write, read=RoutedReadPool(router), replica=router)
