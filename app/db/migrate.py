"""Run the hand-written Alembic migrations from code (`memoria migrate`, `memoria serve`, tests)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, pool, text
from sqlalchemy.engine import make_url

_REPO_ROOT = Path(__file__).resolve().parents[2]


def migrations_dir() -> Path:
    """The `migrations/` folder: beside the source tree, or in the working directory (container)."""
    for candidate in (_REPO_ROOT / "migrations", Path.cwd() / "migrations"):
        if (candidate / "env.py").is_file():
            return candidate
    raise FileNotFoundError("cannot find the migrations/ directory")


def sqlalchemy_url(url: str) -> str:
    """Turn a libpq/asyncpg URL into a SQLAlchemy URL for the psycopg driver."""
    parsed = make_url(url)
    return parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)


def alembic_config(database_url: str, embedding_dimension: int | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    config.attributes["database_url"] = database_url
    config.attributes["embedding_dimension"] = embedding_dimension
    return config


def upgrade_to_head(database_url: str, embedding_dimension: int) -> None:
    command.upgrade(alembic_config(database_url, embedding_dimension), "head")


def downgrade_to(database_url: str, revision: str) -> None:
    command.downgrade(alembic_config(database_url), revision)


def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config("postgresql://unused")).get_current_head()
    if head is None:
        raise RuntimeError("no migrations found")
    return head


def current_revision(database_url: str) -> str | None:
    engine = create_engine(sqlalchemy_url(database_url), poolclass=pool.NullPool)
    try:
        with engine.connect() as conn:
            exists = conn.execute(text("SELECT to_regclass('alembic_version') IS NOT NULL")).scalar()
            if not exists:
                return None
            value = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
            return str(value) if value is not None else None
    finally:
        engine.dispose()


def embedding_dimension_for_migration() -> int:
    """D for the first migration: from `memoria migrate`, `-x embedding_dimension=N`, or (alembic run by
    hand) the settings, which `migrations/env.py` pins before any migration runs."""
    from alembic import context

    value = context.config.attributes.get("embedding_dimension")
    if value is None:
        value = context.get_x_argument(as_dictionary=True).get("embedding_dimension")
    if value is None:
        raise RuntimeError("no embedding dimension: use `memoria migrate` or `-x embedding_dimension=N`")
    dim = int(value)
    if not 1 <= dim <= 4000:
        raise ValueError(f"embedding dimension {dim} is outside halfvec HNSW's 1..4000")
    return dim
