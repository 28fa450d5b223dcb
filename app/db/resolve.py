"""Resolve where the database is: the configured URL, or the embedded server (started on demand)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from app.db.embedded import EmbeddedPostgres
from app.db.migrate import upgrade_to_head
from app.db.settings import DatabaseSettings


@contextmanager
def database_url(
    database: DatabaseSettings,
    *,
    migrate_dimension: int | None = None,
    serve_lock: bool = False,
) -> Iterator[str]:
    """Yield a URL for the configured database; with none configured, run the embedded one.

    With `migrate_dimension` the schema is upgraded to head first (the dimension fixes the vector
    width on a new database). `serve_lock` makes this process the only server on the embedded data
    directory.
    """
    embedded: EmbeddedPostgres | None = None
    try:
        if database.url:
            url = database.url
        else:
            embedded = EmbeddedPostgres(
                database.data_dir, database.database, database.embedded_shared_buffers
            )
            if serve_lock:
                embedded.acquire_serve_lock()
            url = embedded.start()
        if migrate_dimension is not None:
            upgrade_to_head(url, migrate_dimension)
        yield url
    finally:
        if embedded is not None:
            embedded.stop()
