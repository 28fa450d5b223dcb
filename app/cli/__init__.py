"""The `memoria` command: one group; each family of sub-commands lives in a module of this package.

Commands are adapters: they load settings once (`app.cli.config.settings`), reach the database
through `app.cli.config.database`, and call domain services; no domain code imports them.
Commands from outside the app (the benchmarks) are entry points, added on demand (`app.cli.plugins`).
"""

from __future__ import annotations

import logging

import click

from app.cli.plugins import PluginGroup


@click.group(cls=PluginGroup)
@click.option("-v", "--verbose", is_flag=True, help="Log more.")
def main(verbose: bool) -> None:
    """Memoria: hybrid-search memory for AI agents."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def _register() -> None:
    from app.cli import admin
    from app.cli.capture_commands import capture
    from app.cli.client import COMMANDS as CLIENT_COMMANDS
    from app.cli.embeddings import embeddings
    from app.cli.graph import graph
    from app.cli.hooks import hook
    from app.cli.links import COMMANDS as LINK_COMMANDS
    from app.cli.mcp import mcp
    from app.cli.namespaces import namespaces
    from app.cli.promote import promote
    from app.cli.secrets import secrets
    from app.cli.shares import share
    from app.cli.status import status

    for command in (
        *admin.COMMANDS,
        *CLIENT_COMMANDS,
        *LINK_COMMANDS,
        capture,
        graph,
        embeddings,
        hook,
        mcp,
        secrets,
        status,
    ):
        main.add_command(command)
    main.add_command(promote)
    main.add_command(share)
    main.add_command(namespaces)


_register()
