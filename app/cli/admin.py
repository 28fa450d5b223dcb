"""`memoria serve`, `migrate`, `users …`, `keys …`: run the server, administer users, keys and the schema."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import re
import signal
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from types import FrameType
from typing import NoReturn, TypeVar

import asyncpg
import click

from app.auth import service as auth
from app.auth.scopes import ALL_SCOPES, DEFAULT_SCOPES
from app.cli import config
from app.core.logs import configure_logging
from app.settings import Settings

T = TypeVar("T")


def _run_sql(settings: Settings, work: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
    """Run `work` on one connection to the configured (or embedded) database."""

    async def runner(url: str) -> T:
        conn = await asyncpg.connect(url)
        try:
            async with conn.transaction():
                return await work(conn)
        finally:
            await conn.close()

    with config.database(settings) as url:
        return asyncio.run(runner(url))


@click.command()
@click.option("--host", help="Bind address (default from settings).")
@click.option("--port", type=int, help="Port (default from settings).")
@click.option("--no-migrate", is_flag=True, help="Do not run migrations on start.")
@click.option(
    "--shutdown-timeout",
    type=click.IntRange(min=0),
    help="Seconds in-flight requests get to finish after SIGTERM/SIGINT; the rest are cancelled "
    "(default: MEMORIA_SERVER__SHUTDOWN_TIMEOUT_S, 10).",
)
def serve(host: str | None, port: int | None, no_migrate: bool, shutdown_timeout: int | None) -> None:
    """Run the API (embedded PostgreSQL when no database URL is configured).

    On SIGTERM or SIGINT: stop accepting connections, let in-flight requests finish (within
    --shutdown-timeout), then the app's lifespan drains background jobs and closes the pools, and
    last the embedded PostgreSQL is stopped; exit 0. The embedded PostgreSQL is restarted if it dies
    meanwhile; if it cannot be, the server shuts down the same way and exits 1.
    """
    from app import serving
    from app.db.embedded import ServeLockError
    from app.db.schema_check import SchemaMismatch
    from app.db.supervisor import EmbeddedServerLost
    from app.factory import create_app

    settings = config.settings()
    # before anything logs (the embedded PostgreSQL starts next); uvicorn's loggers join it
    configure_logging(settings.server.log_format, settings.server.log_level)
    # uvicorn shuts down gracefully on SIGTERM/SIGINT and then re-raises the signal; turning it
    # into SystemExit unwinds through `database_url`, which stops the embedded PostgreSQL.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _exit_on_signal)
    drain_s = shutdown_timeout if shutdown_timeout is not None else settings.server.shutdown_timeout_s
    limits = serving.ConnectionLimits.from_settings(settings)
    limits = dataclasses.replace(limits, max_connections=serving.connection_ceiling(limits.max_connections))
    try:
        with config.database(settings, migrate=not no_migrate, serve_lock=True) as url:
            app = create_app(settings.with_database_url(url))
            guard = serving.ConnectionGuard(limits)
            app.state.metrics.registry.register(guard)  # open, refused and timed-out connections
            logging.getLogger(serving.__name__).info(limits.describe())
            serving.run(
                serving.uvicorn_config(
                    app,
                    guard,
                    host=host or settings.server.host,
                    port=port if port is not None else settings.server.port,
                    keep_alive_s=settings.server.keep_alive_timeout_s,
                    log_level=settings.server.log_level,
                    shutdown_timeout_s=drain_s,
                )
            )
    except SystemExit as stop:  # the signal: requests, jobs, pools and the embedded PostgreSQL are done
        _exit_now(0 if stop.code is None else stop.code)
    except EmbeddedServerLost as exc:
        click.echo(f"Error: {exc}", err=True)
        _exit_now(1)
    except (ServeLockError, SchemaMismatch) as exc:
        raise click.ClickException(str(exc)) from exc


def _exit_now(code: int | str) -> NoReturn:
    """Exit without waiting for worker threads, once everything that matters has been stopped.

    What may still run then is a model call in a worker thread for a request cut at the shutdown
    timeout, and the interpreter would wait for it before exiting (a batch store cut early leaves
    the rest of its model calls running), so the exit would have no bound.
    """
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code if isinstance(code, int) else 1)


def _exit_on_signal(signum: int, _frame: FrameType | None) -> None:
    # Once: a second Ctrl-C must not cut short the stop of the embedded PostgreSQL that follows.
    for other in (signal.SIGTERM, signal.SIGINT):
        signal.signal(other, signal.SIG_IGN)
    raise SystemExit(0)


@click.command()
def migrate() -> None:
    """Upgrade the database schema to the latest revision."""
    settings = config.settings()
    with config.database(settings, migrate=True):
        pass
    click.echo("database schema is at head", err=True)


@click.group()
def users() -> None:
    """Manage users."""


@users.command("create")
@click.argument("name")
def users_create(name: str) -> None:
    """Create a user NAME."""
    try:
        user_id = _run_sql(config.settings(), lambda c: auth.create_user(c, name))
    except auth.UserExists as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"created user {name!r} (id {user_id})", err=True)


@users.command("list")
def users_list() -> None:
    """List users."""
    for row in _run_sql(config.settings(), auth.list_users):
        click.echo(f"{row['id']}\t{row['name']}\t{row['created_at']:%Y-%m-%d %H:%M}")


@click.group()
def keys() -> None:
    """Manage API keys (only their hashes are stored; a key is shown once)."""


_RELATIVE_EXPIRY = re.compile(r"(\d{1,5})([hdw])")
_EXPIRY_UNITS = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}


def parse_expiry(text: str, now: datetime | None = None) -> datetime:
    """`30d`, `12h`, `2w` from now, or a date / RFC 3339 time (a date or a time without a zone is
    UTC); ValueError for anything else or a moment that is not in the future."""
    now = now or datetime.now(UTC)
    relative = _RELATIVE_EXPIRY.fullmatch(text.strip())
    if relative:
        moment = now + int(relative[1]) * _EXPIRY_UNITS[relative[2]]
    else:
        try:
            moment = datetime.fromisoformat(text.strip())
        except ValueError:
            raise ValueError(
                f"{text!r} is neither a duration (30d, 12h, 2w) nor a date or time (2027-01-01, "
                "2027-01-01T09:00:00Z)"
            ) from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
    if moment <= now:
        raise ValueError(f"{text!r} is not in the future")
    return moment


def _expiry_option(_ctx: click.Context, _param: click.Parameter, value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_expiry(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc


@keys.command("create")
@click.option("--user", "user", required=True, help="The user the key acts for.")
@click.option("--label", help="A note to recognise the key by.")
@click.option("--create-user", is_flag=True, help="Create the user first if it does not exist.")
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    type=click.Choice(ALL_SCOPES),
    help=f"What the key may do; repeat for several (default: {' '.join(DEFAULT_SCOPES)}). A hook "
    "needs only `read`.",
)
@click.option(
    "--expires",
    callback=_expiry_option,
    help="When the key stops working: a duration (30d, 12h, 2w) or a date/time (2027-01-01). Default: never.",
)
def keys_create(
    user: str, label: str | None, create_user: bool, scopes: tuple[str, ...], expires: datetime | None
) -> None:
    """Create an API key; prints the key alone on stdout."""

    async def work(conn: asyncpg.Connection) -> auth.CreatedKey:
        if create_user:
            await auth.get_or_create_user(conn, user)
        return await auth.create_key(conn, user, label, scopes=scopes or DEFAULT_SCOPES, expires_at=expires)

    try:
        created = _run_sql(config.settings(), work)
    except auth.UnknownUser as exc:
        raise click.ClickException(f"{exc} (create it with `memoria users create {user}`)") from exc
    except auth.InvalidKeySpec as exc:
        raise click.UsageError(str(exc)) from exc
    until = f", until {created.expires_at:%Y-%m-%d %H:%M} UTC" if created.expires_at else ""
    click.echo(
        f"key {created.id} for {created.user!r} ({' '.join(created.scopes)}{until}); "
        "store it now, it is not shown again:",
        err=True,
    )
    click.echo(created.key)


@keys.command("revoke")
@click.argument("key_or_id")
def keys_revoke(key_or_id: str) -> None:
    """Revoke a key by its id or the full key."""
    if not _run_sql(config.settings(), lambda c: auth.revoke_key(c, key_or_id)):
        raise click.ClickException(f"no live key matches {key_or_id!r}")
    click.echo("revoked", err=True)


def _when(moment: datetime | None, never: str = "never") -> str:
    return f"{moment.astimezone(UTC):%Y-%m-%d %H:%M}" if moment else never


def _state(key: auth.KeyInfo, now: datetime) -> str:
    if key.revoked_at:
        return f"revoked {key.revoked_at.astimezone(UTC):%Y-%m-%d}"
    if key.expires_at and key.expires_at <= now:
        return "expired"
    return "active"


@keys.command("list")
@click.option("--user", help="Only this user's keys.")
def keys_list(user: str | None) -> None:
    """List keys (prefix only): id, user, prefix, scopes, state, expires, last used (UTC, to the
    minute; written at most once a minute), label; tab-separated under a header line."""
    now = datetime.now(UTC)
    click.echo("id\tuser\tprefix\tscopes\tstate\texpires\tlast_used\tlabel")
    for key in _run_sql(config.settings(), lambda c: auth.list_keys(c, user)):
        click.echo(
            f"{key.id}\t{key.user}\t{key.prefix}…\t{','.join(key.scopes)}\t{_state(key, now)}\t"
            f"{_when(key.expires_at)}\t{_when(key.last_used_at)}\t{key.label or ''}"
        )


COMMANDS: tuple[click.Command, ...] = (serve, migrate, users, keys)
