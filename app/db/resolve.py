"""Resolve where the database is: the configured URL, or the embedded server (started on demand)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from app.db.embedded import EmbeddedPostgres
from app.db.migrate import upgrade_to_head
from app.db.settings import DatabaseSettings
from app.db.supervisor import EmbeddedServerLost, PostmasterSupervisor


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
    directory and the keeper of its postmaster: a supervisor restarts it whenever it dies. If it
    cannot, the process is asked to shut down (SIGTERM) and leaving this block raises
    `EmbeddedServerLost`, so `memoria serve` exits 1 instead of serving without a database.
    """
    embedded: EmbeddedPostgres | None = None
    supervisor: PostmasterSupervisor | None = None
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
            if serve_lock and embedded.restartable:
                supervisor = PostmasterSupervisor(
                    embedded,
                    attempts=database.embedded_restart_attempts,
                    max_backoff_s=database.embedded_restart_max_backoff_s,
                )
                supervisor.start()
        if migrate_dimension is not None:
            upgrade_to_head(url, migrate_dimension)
        yield url
    finally:
        if supervisor is not None:
            supervisor.stop()  # first: the postmaster is about to stop on purpose
        if embedded is not None:
            embedded.stop()
        if supervisor is not None and supervisor.gave_up:
            raise EmbeddedServerLost(supervisor.gave_up)
