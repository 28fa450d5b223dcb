"""Resolve where the database is: the configured URL, or the embedded server (started on demand)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from app.db.embedded import EmbeddedPostgres
from app.db.migrate import upgrade_to_head
from app.settings import Settings


def with_database_url(settings: Settings, url: str) -> Settings:
    database = settings.database.model_copy(update={"url": url})
    return settings.model_copy(update={"database": database})


@contextmanager
def database_url(settings: Settings, *, migrate: bool = True, serve_lock: bool = False) -> Iterator[str]:
    """Yield a URL for the configured database; with none configured, run the embedded one.

    `serve_lock` makes this process the only server on the embedded data directory.
    """
    embedded: EmbeddedPostgres | None = None
    try:
        if settings.database.url:
            url = settings.database.url
        else:
            embedded = EmbeddedPostgres(
                settings.database.data_dir,
                settings.database.database,
                settings.database.embedded_shared_buffers,
            )
            if serve_lock:
                embedded.acquire_serve_lock()
            url = embedded.start()
        if migrate:
            upgrade_to_head(url, settings.embeddings.resolved_dimension)
        yield url
    finally:
        if embedded is not None:
            embedded.stop()
