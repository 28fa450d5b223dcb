"""Scratch databases for benchmarks: a fresh, migrated database that is dropped afterwards."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import asyncpg
import psycopg

from app.auth.service import get_or_create_user
from app.db import Database, create_database
from app.db.embedded import start_server
from app.db.migrate import upgrade_to_head
from app.db.settings import DatabaseSettings
from app.db.urls import with_database


@contextmanager
def scratch_server(shared_buffers: str, data_dir: Path | None = None) -> Iterator[str]:
    """Admin URL of an embedded server with `shared_buffers` (the setting `memoria serve` tunes its
    own with): in `data_dir` (kept) or a temporary one (deleted)."""
    if data_dir is not None:
        server = start_server(data_dir, shared_buffers)
        try:
            yield server.get_uri()
        finally:
            server.cleanup()
        return
    with tempfile.TemporaryDirectory(prefix="memoria-bench-") as tmp:
        os.chmod(tmp, 0o755)  # noqa: S103 - the embedded server runs as another user when we are root
        server = start_server(Path(tmp) / "pgdata", shared_buffers, cleanup_mode="delete")
        try:
            yield server.get_uri()
        finally:
            server.cleanup()


@contextmanager
def scratch_database(admin_url: str, dimension: int, name: str | None = None) -> Iterator[tuple[str, bool]]:
    """Yield (url, created). A named database that exists already is reused and kept."""
    database = name or f"bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,)).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{database}"')
    url = with_database(admin_url, database)
    upgrade_to_head(url, dimension)
    try:
        yield url, not exists
    finally:
        if name is None:
            with psycopg.connect(admin_url, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE "{database}" WITH (FORCE)')


async def bench_user(url: str, name: str = "bench") -> int:
    """The benchmark's user, created on first use (a kept database reuses it)."""
    conn = await asyncpg.connect(url)
    try:
        return await get_or_create_user(conn, name)
    finally:
        await conn.close()


@asynccontextmanager
async def open_database(url: str, settings: DatabaseSettings) -> AsyncIterator[Database]:
    """The service's pools on `url`, closed when the benchmark is done."""
    db = await create_database(url, settings)
    try:
        yield db
    finally:
        await db.close()
