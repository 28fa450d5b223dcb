"""Reads routed to a streaming replica, and around it when it fails, lags, or lacks a caller's write.

With `MEMORIA_DATABASE__READ_URL` set, `Database.read` is a `RoutedReadPool`: each `acquire()` picks
the replica or the primary, so every read path (recall, the hook routes, graph and UI pages, links)
is routed without knowing it. The replica is used only when all of these hold:

- it has not failed within `replica_backoff_s` (a failed acquire, a connection lost inside a block, or a
  failed lag probe): a dead replica costs one request the bound, not every request;
- its lag, as the probe last measured it, is at most `replica_max_lag_s`;
- the calling user has not written since the newest primary WAL position the replica is known to have
  replayed (read-your-writes, below).

The replica is acquired with its own short bound (`replica_acquire_timeout_s`, also under the request's
deadline); past it, or on any connection error, the read goes to the primary in the same request. A
read on a replica connection may use at most half of what is left of its request's deadline
(`READ_SHARE_OF_DEADLINE`): past that the connection is cut, the replica counts as failed, and a recall
(the prompt hook's too) runs again on the primary in the other half, so a replica that hangs
mid-read costs the hook half its budget, not its answer.

Lag and read-your-writes come from one probe (`replica_probe_interval_s`): it reads the primary's
`pg_current_wal_lsn()`, noting when it asked, then the replica's `pg_last_wal_replay_lsn()`. The lag is
the age of the oldest primary position the replica has not replayed (0 when caught up; no clock of the
replica's involved). `replayed_as_of` is the latest moment whose primary position the replica has
replayed: everything committed before it is visible there. A write is noted per user, with its time,
when a write-pool block of a `/v1` request ends (`note_writes`); that user's reads go to the primary
until `replayed_as_of` passes the write, i.e. within about one probe interval plus the replica's lag.
Reads and writes pay no round trip for this. The state is per process (docs/operate/read-replicas.md:
behind several processes without sticky routing, another process may serve a read from a replica that
has not replayed the write yet, at most `replica_max_lag_s` behind).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from types import TracebackType
from typing import Any, TypeVar

import asyncpg

from app.core import deadline
from app.db.settings import DatabaseSettings

log = logging.getLogger(__name__)
T = TypeVar("T")

READ_SHARE_OF_DEADLINE = 0.5
"""The share of a request's remaining deadline a block on a replica connection may take before the
connection is cut (the rest is for the same read on the primary)."""
MAX_TRACKED_WRITERS = 100_000
MAX_OBSERVATIONS = 10_000

# Who the current request reads and writes for (set by the API-key middleware and the hook routes).
_reader: contextvars.ContextVar[int | None] = contextvars.ContextVar("memoria_reader", default=None)
_writer: contextvars.ContextVar[int | None] = contextvars.ContextVar("memoria_writer", default=None)
# Set when a replica connection failed inside a block of the current task: the caller may retry.
_lost: contextvars.ContextVar[bool] = contextvars.ContextVar("memoria_replica_lost", default=False)

CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    OSError,  # refused, reset; TimeoutError too
    asyncpg.InterfaceError,  # ConnectionDoesNotExistError among them
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,  # admin/crash shutdown of the replica
    asyncpg.InternalClientError,
)


def act_for(user_id: int, *, note_writes: bool) -> None:
    """The rest of this request reads (and, with `note_writes`, writes) for `user_id`. The hook routes
    do not note writes: theirs are the session ledger, which is read from the primary anyway."""
    _reader.set(user_id)
    _writer.set(user_id if note_writes else None)


def parse_lsn(text: str) -> int:
    high, low = text.split("/")
    return (int(high, 16) << 32) + int(low, 16)


class ReplicaRouter:
    """Which pool a read goes to (module docstring), the lag probe, and what it measured."""

    def __init__(self, primary: asyncpg.Pool, replica: asyncpg.Pool, settings: DatabaseSettings) -> None:
        self.primary = primary
        self.replica = replica
        self._settings = settings
        self._failed_until = 0.0
        self.lag_s: float | None = None  # None: not measured, or the last probe failed
        self._replayed_as_of = float("-inf")
        self._observations: deque[tuple[float, int]] = deque(maxlen=MAX_OBSERVATIONS)
        self._last_write: dict[int, float] = {}
        self.reads = {"replica": 0, "primary": 0}
        self.fallbacks = 0
        self.last_error: str | None = None
        self._task: asyncio.Task[None] | None = None

    # ---- routing ---------------------------------------------------------------------------------

    def use_replica(self) -> bool:
        if time.monotonic() < self._failed_until:
            return False
        if self.lag_s is None or self.lag_s > self._settings.replica_max_lag_s:
            return False
        user = _reader.get()
        wrote = None if user is None else self._last_write.get(user)
        return wrote is None or wrote < self._replayed_as_of

    def caught_up_with_writes(self) -> bool:
        """Whether every write noted so far is known to be on the replica."""
        return all(at < self._replayed_as_of for at in self._last_write.values())

    def failed(self, exc: BaseException) -> None:
        """Route around the replica for `replica_backoff_s`."""
        self._failed_until = time.monotonic() + self._settings.replica_backoff_s
        self.lag_s = None
        self.fallbacks += 1
        self.last_error = f"{type(exc).__name__}: {exc}"[:300]
        log.warning(
            "read replica failed (%s); reads go to the primary for %.1f s",
            self.last_error,
            self._settings.replica_backoff_s,
        )

    def wrote(self) -> None:
        """A write-pool block of the current request ended: its user's reads wait for the replica."""
        user = _writer.get()
        if user is None:
            return
        if len(self._last_write) >= MAX_TRACKED_WRITERS:
            self._forget_replayed()
            if len(self._last_write) >= MAX_TRACKED_WRITERS:
                self._last_write.clear()
                self._failed_until = time.monotonic() + self._settings.replica_max_lag_s  # stay safe
        self._last_write[user] = time.monotonic()

    def _forget_replayed(self) -> None:
        seen = self._replayed_as_of
        self._last_write = {user: at for user, at in self._last_write.items() if at >= seen}

    # ---- the probe -------------------------------------------------------------------------------

    async def probe(self) -> None:
        """One measurement of lag and `replayed_as_of` (module docstring)."""
        bound = self._settings.replica_acquire_timeout_s
        asked = time.monotonic()
        try:
            primary_lsn = await self.primary.fetchval("SELECT pg_current_wal_lsn()::text", timeout=bound * 4)
            self._observations.append((asked, parse_lsn(primary_lsn)))
            replayed = await self.replica.fetchval(
                "SELECT coalesce(pg_last_wal_replay_lsn(), pg_current_wal_lsn())::text", timeout=bound * 4
            )
        except Exception as exc:  # cancellation still ends the probe
            self.failed(exc)
            return
        replay_lsn = parse_lsn(replayed)
        while self._observations and self._observations[0][1] <= replay_lsn:
            self._replayed_as_of = max(self._replayed_as_of, self._observations.popleft()[0])
        now = time.monotonic()
        self.lag_s = now - self._observations[0][0] if self._observations else 0.0
        self._forget_replayed()

    def start(self) -> None:
        self._task = asyncio.create_task(self._probe_forever(), name="memoria-replica-probe")

    async def _probe_forever(self) -> None:
        while True:  # ends when the app closes the database (cancelled)
            await self.probe()
            await asyncio.sleep(self._settings.replica_probe_interval_s)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.replica.close()

    def details(self) -> dict[str, Any]:
        """For `/readyz` (admin keys): what the router sees."""
        backing_off = time.monotonic() < self._failed_until
        return {
            "lag_s": None if self.lag_s is None else round(self.lag_s, 3),
            "max_lag_s": self._settings.replica_max_lag_s,
            "serving_reads": not backing_off
            and self.lag_s is not None
            and self.lag_s <= self._settings.replica_max_lag_s,
            "backing_off": backing_off,
            "reads": dict(self.reads),
            "fallbacks": self.fallbacks,
            "last_error": self.last_error,
        }


class _RoutedAcquire:
    __slots__ = ("_cut", "_from_replica", "_inner", "_router", "_timeout", "_watchdog")

    def __init__(self, router: ReplicaRouter, timeout: float | None = None) -> None:
        self._router = router
        self._timeout = timeout
        self._inner: Any = None
        self._from_replica = False
        self._watchdog: asyncio.TimerHandle | None = None
        self._cut = False

    def _watch(self, conn: Any) -> None:
        """Cut `conn` if the block outlives its share of the request's deadline (module docstring):
        a hung replica answers nothing, and only closing the socket ends the wait."""
        left = deadline.remaining()
        if left is None:
            return

        def cut() -> None:
            self._cut = True
            conn.terminate()

        self._watchdog = asyncio.get_running_loop().call_later(left * READ_SHARE_OF_DEADLINE, cut)

    async def __aenter__(self) -> Any:
        router = self._router
        if router.use_replica():
            bound = router._settings.replica_acquire_timeout_s
            left = deadline.remaining()
            inner = router.replica.acquire(timeout=bound if left is None else min(bound, left))
            try:
                conn = await inner.__aenter__()
            except CONNECTION_ERRORS as exc:
                router.failed(exc)
            else:
                self._inner, self._from_replica = inner, True
                router.reads["replica"] += 1
                self._watch(conn)
                return conn
        self._inner = router.primary.acquire(timeout=self._timeout)
        conn = await self._inner.__aenter__()
        router.reads["primary"] += 1
        return conn

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
        if self._from_replica and exc is not None and (self._cut or isinstance(exc, CONNECTION_ERRORS)):
            self._router.failed(
                TimeoutError("a read on the replica outlived its share of the deadline") if self._cut else exc
            )
            _lost.set(True)
        await self._inner.__aexit__(exc_type, exc, tb)


class RoutedReadPool:
    """The read pool when a replica is configured: the pool methods the read paths use."""

    def __init__(self, router: ReplicaRouter) -> None:
        self.router = router

    def acquire(self, *, timeout: float | None = None) -> _RoutedAcquire:
        """`timeout` bounds the wait for a primary connection (the replica has its own bound)."""
        return _RoutedAcquire(self.router, timeout)

    async def fetch(self, query: str, *args: Any, timeout: float | None = None) -> list[asyncpg.Record]:  # noqa: ASYNC109  asyncpg's signature
        async with self.acquire() as conn:
            rows: list[asyncpg.Record] = await conn.fetch(query, *args, timeout=timeout)
            return rows

    async def fetchrow(self, query: str, *args: Any, timeout: float | None = None) -> asyncpg.Record | None:  # noqa: ASYNC109  asyncpg's signature
        async with self.acquire() as conn:
            row: asyncpg.Record | None = await conn.fetchrow(query, *args, timeout=timeout)
            return row

    async def fetchval(self, query: str, *args: Any, column: int = 0, timeout: float | None = None) -> Any:  # noqa: ASYNC109  asyncpg's signature
        async with self.acquire() as conn:
            return await conn.fetchval(query, *args, column=column, timeout=timeout)

    async def execute(self, query: str, *args: Any, timeout: float | None = None) -> str:  # noqa: ASYNC109  asyncpg's signature
        async with self.acquire() as conn:
            status: str = await conn.execute(query, *args, timeout=timeout)
            return status

    def terminate(self) -> None:
        self.router.replica.terminate()


@contextlib.contextmanager
def _fresh_loss_flag() -> Iterator[None]:
    token = _lost.set(False)
    try:
        yield
    finally:
        _lost.reset(token)


async def retry_on_primary(call: Callable[[], Awaitable[T]]) -> T:
    """`call()`, and once more (on the primary: the replica is now backing off) when the replica's
    connection was lost inside it: a replica that died between requests costs no answer."""
    with _fresh_loss_flag():
        try:
            return await call()
        except Exception:
            if not _lost.get():
                raise
            log.warning("a read lost its replica connection; retried on the primary")
    return await call()
