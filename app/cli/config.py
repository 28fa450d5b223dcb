"""The one way every `memoria` command loads its settings and reaches its database."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import click

from app.db.resolve import database_url
from app.settings import InvalidSettings, Settings, load_settings


def settings() -> Settings:
    """The settings, or a one-line error naming the bad variable (never a pydantic traceback)."""
    try:
        return load_settings()
    except InvalidSettings as exc:
        raise click.ClickException(str(exc)) from exc


@contextmanager
def database(config: Settings, *, migrate: bool = True, serve_lock: bool = False) -> Iterator[str]:
    """The configured database's URL (starting the embedded server when none is configured), at head."""
    dimension = config.embeddings.resolved_dimension if migrate else None
    with database_url(config.database, migrate_dimension=dimension, serve_lock=serve_lock) as url:
        yield url
