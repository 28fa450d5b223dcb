"""Warm what recall reads before the service says it is ready, at start and after PostgreSQL restarts.

Right after PostgreSQL (re)starts its shared buffers are empty: the first recalls read the table
and its indexes from disk, and on a big database they ran into the statement timeout. The
warm-up reads the hot tables and every index on them (HOT_TABLES, in that order) while `/readyz`
says "not ready", within a time bound; it never fails the start, it only logs what it could not do.

- With `pg_prewarm` (installed, or created here if the server ships it and the role may) each
  relation is loaded into shared buffers.
- Without it (pgserver's embedded PostgreSQL does not ship it; nor do servers where the role may
  not create it) a table's heap is read into shared buffers by fetching one tuple id per page: a
  sequential scan would not do, PostgreSQL reads tables over a quarter of shared_buffers through a
  small ring of buffers and keeps almost nothing. Indexes and TOAST have no such path in plain SQL;
  their files are read into the OS page cache instead (`pg_read_binary_file`, which needs superuser
  or pg_read_server_files, as the embedded server's role has), so the first queries fill shared
  buffers from memory rather than from disk.

Relations that would not fit in what is left of shared_buffers are skipped rather than evicting the
ones already loaded. One log line says what was warmed and how long it took; the first recall after
a restart then reads memory instead of disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg

log = logging.getLogger(__name__)

# What recall, store and the bearer-key check read, in the order they are warmed (small first).
HOT_TABLES = ("api_keys", "users", "namespaces", "memories", "concepts", "memory_concepts", "concept_edges")
RESTART_CHECK_INTERVAL_S = 1.0  # how often the watcher asks whether PostgreSQL restarted
_CHECK_TIMEOUT_S = 5.0
_CHUNK_BYTES = 8 * 1024 * 1024  # pg_read_binary_file reads a file in pieces this big
_SEGMENT_BYTES = 1024**3  # PostgreSQL splits relation files into 1 GB segments: path, path.1, ...
_GRACE_S = 1.0  # client-side timeout beyond the server-side statement_timeout

# Each hot table, then its indexes (largest first), then its TOAST table and the TOAST index.
_RELATIONS = """
SELECT r.oid, r.oid::regclass::text AS name, r.kind, pg_relation_filepath(r.oid) AS path
FROM unnest($1::text[]) WITH ORDINALITY AS hot (name, ord)
JOIN pg_class t ON t.oid = to_regclass(hot.name) AND t.relkind = 'r'
CROSS JOIN LATERAL (
    SELECT t.oid, 'table' AS kind, 0 AS part, 0::bigint AS pages
    UNION ALL
    SELECT i.indexrelid, 'index', 1, c.relpages::bigint
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    WHERE i.indrelid = t.oid
    UNION ALL
    SELECT t.reltoastrelid, 'toast', 2, 0 WHERE t.reltoastrelid <> 0
    UNION ALL
    SELECT i.indexrelid, 'toast', 3, 0 FROM pg_index i WHERE i.indrelid = t.reltoastrelid
) r
ORDER BY hot.ord, r.part, r.pages DESC, r.oid
"""

# One tuple id per page: a TID scan reads each page through shared buffers (no ring).
_HEAP_INTO_BUFFERS = """
SELECT count(*) FROM {table}
WHERE ctid = ANY (ARRAY(SELECT format('(%s,1)', b)::tid FROM generate_series(0, $1::bigint - 1) b))
"""

_PREWARM_SCHEMA = """
SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
WHERE e.extname = 'pg_prewarm'
"""
_CAN_READ_FILES = "SELECT pg_has_role('pg_read_server_files', 'USAGE')"
_SHARED_BUFFERS = "SELECT setting::bigint FROM pg_settings WHERE name = 'shared_buffers'"

_FILE_INTO_OS_CACHE = """
SELECT coalesce(sum(length(pg_read_binary_file(
    CASE WHEN off < $3::bigint THEN $1::text ELSE $1::text || '.' || (off / $3::bigint) END,
    off % $3::bigint, $4::bigint, true))), 0)
FROM generate_series(0, $2::bigint - 1, $4::bigint) AS off
"""


@dataclass(slots=True)
class WarmupReport:
    """What one warm-up did: for the log line and for tests."""

    method: str
    why: str = ""
    into_buffers: list[tuple[str, int]] = field(default_factory=list)
    into_os_cache: list[tuple[str, int]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    cut_short: str = ""
    elapsed_s: float = 0.0

    @property
    def warmed(self) -> list[str]:
        return [name for name, _ in self.into_buffers + self.into_os_cache]

    def summary(self) -> str:
        def listing(items: list[tuple[str, int]]) -> str:
            total = sum(size for _, size in items)
            top = sorted(items, key=lambda item: -item[1])[:6]
            parts = [f"{name} {_mb(size)}" for name, size in top]
            if len(items) > len(top):
                parts.append(f"{len(items) - len(top)} smaller")
            return f"{_mb(total)} ({', '.join(parts)})"

        lines = [
            f"warm-up took {self.elapsed_s:.2f} s, method {self.method}"
            + (f" ({self.why})" if self.why else "")
        ]
        if self.into_buffers:
            lines.append(f"into shared buffers {listing(self.into_buffers)}")
        if self.into_os_cache:
            lines.append(f"into the OS cache {listing(self.into_os_cache)}")
        if not self.into_buffers and not self.into_os_cache:
            lines.append("nothing warmed")
        if self.skipped:
            lines.append("skipped " + ", ".join(f"{name} ({why})" for name, why in self.skipped))
        if self.cut_short:
            lines.append(f"stopped early: {self.cut_short}")
        return "; ".join(lines)


def _mb(size: int) -> str:
    return f"{size / 1_048_576:.1f} MB" if size >= 1_048_576 else f"{size // 1024} kB"


class _Deadline:
    def __init__(self, seconds: float) -> None:
        self.start = time.monotonic()
        self.end = self.start + seconds

    def left(self) -> float:
        return self.end - time.monotonic()


async def _bounded(conn: asyncpg.Connection, deadline: _Deadline, query: str, *args: object) -> Any:
    """One statement in its own transaction, cancelled by the server when the bound is reached."""
    left = deadline.left()
    if left <= 0:
        raise TimeoutError
    async with conn.transaction():
        await conn.execute(f"SET LOCAL statement_timeout = {max(1, int(left * 1000))}")
        return await conn.fetchval(query, *args, timeout=left + _GRACE_S)


async def _prewarm_schema(conn: asyncpg.Connection, deadline: _Deadline) -> tuple[str | None, str]:
    """The schema pg_prewarm lives in (creating it if this server ships it and we may), or why not."""
    schema = await _bounded(conn, deadline, _PREWARM_SCHEMA)
    if schema is not None:
        return str(schema), ""
    shipped = await _bounded(
        conn, deadline, "SELECT 1 FROM pg_available_extensions WHERE name = 'pg_prewarm'"
    )
    if shipped is None:
        return None, "this PostgreSQL does not ship pg_prewarm"
    try:
        await _bounded(conn, deadline, "CREATE EXTENSION IF NOT EXISTS pg_prewarm")
    except asyncpg.PostgresError as exc:  # not allowed (not superuser), or a read-only replica
        detail = " ".join(str(exc).split())  # one log line, the HINT included
        return None, f"CREATE EXTENSION pg_prewarm failed: {type(exc).__name__}: {detail}"
    schema = await _bounded(conn, deadline, _PREWARM_SCHEMA)
    return (str(schema), "created pg_prewarm") if schema is not None else (None, "pg_prewarm not found")


async def warm_up(pool: asyncpg.Pool, timeout_s: float, tables: tuple[str, ...] = HOT_TABLES) -> WarmupReport:
    """Warm the hot relations of the database behind `pool` for at most `timeout_s` seconds.

    Every statement runs with a statement_timeout of the time left, so a relation someone holds an
    exclusive lock on, or a huge one, ends the warm-up at the bound instead of holding up the start.
    """
    deadline = _Deadline(timeout_s)
    report = WarmupReport(method="none")
    try:
        async with pool.acquire(timeout=max(deadline.left(), 0.001)) as conn:
            schema, report.why = await _prewarm_schema(conn, deadline)
            report.method = "pg_prewarm" if schema is not None else "reads"
            read_files = bool(await _bounded(conn, deadline, _CAN_READ_FILES))
            block = int(await _bounded(conn, deadline, "SELECT current_setting('block_size')::int"))
            buffer_room = block * int(await _bounded(conn, deadline, _SHARED_BUFFERS))
            relations = await conn.fetch(_RELATIONS, list(tables), timeout=max(deadline.left(), 0.001))
            for rel in relations:
                name, kind = str(rel["name"]), str(rel["kind"])
                size = int(await _bounded(conn, deadline, "SELECT pg_relation_size($1::oid)", rel["oid"]))
                if size == 0:
                    continue
                into_buffers = schema is not None or kind == "table"
                if into_buffers and size > buffer_room:
                    report.skipped.append(
                        (name, f"{_mb(size)} would not fit in what is left of shared_buffers")
                    )
                    continue
                if schema is not None:
                    prewarm = f'SELECT "{schema}".pg_prewarm($1::oid)'
                    report.into_buffers.append(
                        (name, int(await _bounded(conn, deadline, prewarm, rel["oid"])) * block)
                    )
                    buffer_room -= size
                elif kind == "table":
                    await _bounded(conn, deadline, _HEAP_INTO_BUFFERS.format(table=name), size // block)
                    report.into_buffers.append((name, size))
                    buffer_room -= size
                elif read_files:
                    read = await _bounded(
                        conn, deadline, _FILE_INTO_OS_CACHE, rel["path"], size, _SEGMENT_BYTES, _CHUNK_BYTES
                    )
                    report.into_os_cache.append((name, int(read)))
                else:
                    report.skipped.append((name, "reading its file needs pg_read_server_files"))
    except (TimeoutError, asyncpg.QueryCanceledError):
        report.cut_short = f"the {timeout_s:g} s bound was reached"
    except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
        report.cut_short = f"{type(exc).__name__}: {exc}"
    report.elapsed_s = time.monotonic() - deadline.start
    return report


class Warmer:
    """Runs the warm-up at start and again whenever PostgreSQL has restarted; `warming` for /readyz.

    A restart shows as a new `pg_postmaster_start_time()`. The start times already warmed are
    remembered (a few), so a pooler spreading connections over several servers does not make every
    check look like a restart.
    """

    def __init__(self, pool: asyncpg.Pool, timeout_s: float) -> None:
        self._pool = pool
        self._timeout_s = timeout_s
        self._warmed: deque[datetime] = deque(maxlen=8)
        self._watcher: asyncio.Task[None] | None = None
        self.warming = False
        self.last: WarmupReport | None = None

    @property
    def enabled(self) -> bool:
        return self._timeout_s > 0

    async def warm(self) -> WarmupReport | None:
        """One bounded warm-up (not ready meanwhile); never raises: a failed warm-up only costs speed."""
        if not self.enabled:
            return None
        self.warming = True
        try:
            started = await self._pool.fetchval("SELECT pg_postmaster_start_time()", timeout=_CHECK_TIMEOUT_S)
            report = await warm_up(self._pool, self._timeout_s)
            if started is not None:
                self._warmed.append(started)
            (log.warning if report.cut_short else log.info)("%s", report.summary())
            self.last = report
            return report
        except Exception as exc:  # warm-up is an optimisation: never a reason not to serve
            log.warning("warm-up failed, serving with cold caches: %s: %s", type(exc).__name__, exc)
            return None
        finally:
            self.warming = False

    def start_watching(self) -> None:
        if self.enabled and self._watcher is None:
            self._watcher = asyncio.create_task(self._watch(), name="warm-up watcher")

    async def close(self) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

    async def _watch(self) -> None:
        while (
            True
        ):  # until cancelled by close(); each round is bounded by _CHECK_TIMEOUT_S + the warm-up bound
            await asyncio.sleep(RESTART_CHECK_INTERVAL_S)
            try:
                started = await self._pool.fetchval(
                    "SELECT pg_postmaster_start_time()", timeout=_CHECK_TIMEOUT_S
                )
            except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError):
                continue  # PostgreSQL is down or restarting: check again
            if started is not None and started not in self._warmed:
                log.warning("PostgreSQL restarted (at %s): warming up again, not ready until done", started)
                await self.warm()
