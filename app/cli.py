"""The `memoria` command: run the server and administer users, keys and the schema."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Awaitable, Callable
from types import FrameType
from typing import TypeVar

import asyncpg
import click
from pydantic import ValidationError

from app.auth import service as auth
from app.db.resolve import database_url, with_database_url
from app.settings import Settings

T = TypeVar("T")


def _settings() -> Settings:
    try:
        return Settings()
    except ValidationError as exc:
        raise click.ClickException(f"invalid configuration:\n{exc}") from exc


def _run_sql(settings: Settings, work: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
    """Run `work` on one connection to the configured (or embedded) database."""

    async def runner(url: str) -> T:
        conn = await asyncpg.connect(url)
        try:
            async with conn.transaction():
                return await work(conn)
        finally:
            await conn.close()

    with database_url(settings) as url:
        return asyncio.run(runner(url))


@click.group()
@click.option("-v", "--verbose", is_flag=True, help="Log more.")
def main(verbose: bool) -> None:
    """Memoria: hybrid-search memory for AI agents."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


@main.command()
@click.option("--host", help="Bind address (default from settings).")
@click.option("--port", type=int, help="Port (default from settings).")
@click.option("--no-migrate", is_flag=True, help="Do not run migrations on start.")
def serve(host: str | None, port: int | None, no_migrate: bool) -> None:
    """Run the API (embedded PostgreSQL when no database URL is configured)."""
    import uvicorn

    from app.db.embedded import ServeLockError
    from app.db.schema_check import SchemaMismatch
    from app.factory import create_app

    settings = _settings()
    logging.getLogger("app").setLevel(logging.INFO)
    # uvicorn shuts down gracefully on SIGTERM/SIGINT and then re-raises the signal; turning it
    # into SystemExit unwinds through `database_url`, which stops the embedded PostgreSQL.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _exit_on_signal)
    try:
        with database_url(settings, migrate=not no_migrate, serve_lock=True) as url:
            app = create_app(with_database_url(settings, url))
            uvicorn.run(
                app,
                host=host or settings.server.host,
                port=port if port is not None else settings.server.port,
                log_level=settings.server.log_level,
                lifespan="on",
            )
    except (ServeLockError, SchemaMismatch) as exc:
        raise click.ClickException(str(exc)) from exc


def _exit_on_signal(signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(0)


@main.command()
def migrate() -> None:
    """Upgrade the database schema to the latest revision."""
    settings = _settings()
    with database_url(settings, migrate=True):
        pass
    click.echo("database schema is at head", err=True)


@main.group()
def users() -> None:
    """Manage users."""


@users.command("create")
@click.argument("name")
def users_create(name: str) -> None:
    """Create a user NAME."""
    try:
        user_id = _run_sql(_settings(), lambda c: auth.create_user(c, name))
    except auth.UserExists as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"created user {name!r} (id {user_id})", err=True)


@users.command("list")
def users_list() -> None:
    """List users."""
    for row in _run_sql(_settings(), auth.list_users):
        click.echo(f"{row['id']}\t{row['name']}\t{row['created_at']:%Y-%m-%d %H:%M}")


@main.group()
def keys() -> None:
    """Manage API keys (only their hashes are stored; a key is shown once)."""


@keys.command("create")
@click.option("--user", "user", required=True, help="The user the key acts for.")
@click.option("--label", help="A note to recognise the key by.")
@click.option("--create-user", is_flag=True, help="Create the user first if it does not exist.")
def keys_create(user: str, label: str | None, create_user: bool) -> None:
    """Create an API key; prints the key alone on stdout."""

    async def work(conn: asyncpg.Connection) -> auth.CreatedKey:
        if create_user and await conn.fetchval("SELECT id FROM users WHERE name = $1", user) is None:
            await auth.create_user(conn, user)
        return await auth.create_key(conn, user, label)

    try:
        created = _run_sql(_settings(), work)
    except auth.UnknownUser as exc:
        raise click.ClickException(f"{exc} (create it with `memoria users create {user}`)") from exc
    click.echo(f"key {created.id} for {created.user!r}; store it now, it is not shown again:", err=True)
    click.echo(created.key)


@keys.command("revoke")
@click.argument("key_or_id")
def keys_revoke(key_or_id: str) -> None:
    """Revoke a key by its id or the full key."""
    if not _run_sql(_settings(), lambda c: auth.revoke_key(c, key_or_id)):
        raise click.ClickException(f"no live key matches {key_or_id!r}")
    click.echo("revoked", err=True)


@keys.command("list")
@click.option("--user", help="Only this user's keys.")
def keys_list(user: str | None) -> None:
    """List keys (prefix only)."""
    for key in _run_sql(_settings(), lambda c: auth.list_keys(c, user)):
        state = f"revoked {key.revoked_at:%Y-%m-%d}" if key.revoked_at else "active"
        click.echo(f"{key.id}\t{key.user}\t{key.prefix}…\t{state}\t{key.label or ''}")


def _register_plugins() -> None:
    from app.bench.commands import bench
    from app.graph.commands import graph

    main.add_command(bench)
    main.add_command(graph)


_register_plugins()


def _register_client_and_hooks() -> None:
    """The commands for people (remember, recall, …), `memoria hook …` and `memoria bench hook`."""
    from app.bench.commands import bench
    from app.client.cli import COMMANDS
    from app.hooks.bench import bench_hook
    from app.hooks.cli import hook

    for command in COMMANDS:
        main.add_command(command)
    main.add_command(hook)
    bench.add_command(bench_hook)


_register_client_and_hooks()


def _register_embeddings() -> None:
    from app.embeddings.commands import embeddings

    main.add_command(embeddings)


_register_embeddings()


if __name__ == "__main__":
    sys.exit(main())
