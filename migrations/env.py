"""Alembic environment: hand-written SQL migrations run over a synchronous psycopg connection.

The database URL and the embedding dimension come from `config.attributes` when `memoria migrate`
drives Alembic, else from the Memoria settings / `-x` arguments when `alembic` is run by hand.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, pool

from app.db.migrate import sqlalchemy_url

config = context.config


def _database_url() -> str:
    url = config.attributes.get("database_url")
    if url is None:
        from app.settings import Settings

        url = Settings().database.url
    if not url:
        raise RuntimeError("no database URL: set MEMORIA_DATABASE__URL")
    return sqlalchemy_url(str(url))


def _pin_embedding_dimension() -> None:
    """Run by hand (`alembic upgrade head`), the dimension comes from `-x` or the settings."""
    if config.attributes.get("embedding_dimension") is not None:
        return
    if context.get_x_argument(as_dictionary=True).get("embedding_dimension") is not None:
        return
    from app.settings import Settings

    config.attributes["embedding_dimension"] = Settings().embeddings.resolved_dimension


def run_migrations_online() -> None:
    _pin_embedding_dimension()
    engine = create_engine(_database_url(), poolclass=pool.NullPool)
    with engine.connect() as connection:
        context.configure(connection=connection, transaction_per_migration=True)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    raise RuntimeError("offline (--sql) mode is not supported: migrations need a live connection")
run_migrations_online()
