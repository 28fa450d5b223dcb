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


def run_migrations_online() -> None:
    engine = create_engine(_database_url(), poolclass=pool.NullPool)
    with engine.connect() as connection:
        context.configure(connection=connection, transaction_per_migration=True)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    raise RuntimeError("offline (--sql) mode is not supported: migrations need a live connection")
run_migrations_online()
