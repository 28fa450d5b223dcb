"""Scratch databases for benchmarks: a fresh, migrated database that is dropped afterwards."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import asyncpg
import psycopg

from app.auth.service import create_user
from app.db import Database, create_database
from app.db.embedded import start_server
from app.db.migrate import upgrade_to_head
from app.embeddings import Embedder
from app.settings import Settings


def _with_db(url: str, name: str) -> str:
    return urlsplit(url)._replace(path="/" + name).geturl()


@contextmanager
def scratch_server(data_dir: Path | None = None) -> Iterator[str]:
    """Admin URL of an embedded server, tuned as `memoria serve` tunes its own: in `data_dir` (kept)
    or a temporary one (deleted)."""
    buffers = Settings().database.embedded_shared_buffers
    if data_dir is not None:
        server = start_server(data_dir, buffers)
        try:
            yield server.get_uri()
        finally:
            server.cleanup()
        return
    with tempfile.TemporaryDirectory(prefix="memoria-bench-") as tmp:
        os.chmod(tmp, 0o755)  # noqa: S103 - the embedded server runs as another user when we are root
        server = start_server(Path(tmp) / "pgdata", buffers, cleanup_mode="delete")
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
    url = _with_db(admin_url, database)
    upgrade_to_head(url, dimension)
    try:
        yield url, not exists
    finally:
        if name is None:
            with psycopg.connect(admin_url, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE "{database}" WITH (FORCE)')


async def bench_user(url: str, name: str = "bench") -> int:
    conn = await asyncpg.connect(url)
    try:
        user_id = await conn.fetchval("SELECT id FROM users WHERE name = $1", name)
        return int(user_id) if user_id is not None else await create_user(conn, name)
    finally:
        await conn.close()


@asynccontextmanager
async def open_services(url: str, settings: Settings, embedder: Embedder) -> AsyncIterator[Database]:
    db = await create_database(url, settings.database)
    try:
        yield db
    finally:
        await db.close()
