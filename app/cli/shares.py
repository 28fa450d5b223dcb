"""`memoria share add | list | revoke`: share your namespaces with other users (moved out of
`app.cli.client`, which holds the memory commands)."""

from __future__ import annotations

import click
from rich.markup import escape

from app.cli.config import settings
from app.client.api import Api
from app.client.render import console, print_json


@click.group()
def share() -> None:
    """Share your namespaces with other users; see what is shared with you.

    A namespace shared with you is read (and, with write, written) by its address @owner/name,
    e.g. `memoria recall "..." -n @alice/repo:shop-api`; recall and list without -n never include it.
    Adding and revoking need a key with the admin scope.
    """


@share.command("add")
@click.argument("namespace")
@click.argument("user")
@click.option("--write", is_flag=True, help="USER may store, change and delete memories too (default: read).")
def share_add(namespace: str, user: str, write: bool) -> None:
    """Share your NAMESPACE with USER (again: change the permission)."""
    with Api.from_settings(settings().client) as api:
        granted, new = api.share(namespace, user, "write" if write else "read")
    verb = "shared" if new else "now sharing"
    console().print(
        escape(
            f"{verb} {granted['namespace']} with {granted['user']} ({granted['permission']}); "
            f"they name it {granted['address']}"
        )
    )


@share.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the raw API answer.")
def share_list(as_json: bool) -> None:
    """The shares you gave and the namespaces shared with you."""
    with Api.from_settings(settings().client) as api:
        shares = api.shares()
    if as_json:
        print_json(shares)
        return
    out = console()
    out.print("shared by you:" if shares["granted"] else "shared by you: none")
    for granted in shares["granted"]:
        out.print(escape(f"  {granted['namespace']}  ->  {granted['user']}  ({granted['permission']})"))
    out.print("shared with you:" if shares["received"] else "shared with you: none")
    for received in shares["received"]:
        out.print(escape(f"  {received['namespace']}  ({received['permission']})"))


@share.command("revoke")
@click.argument("namespace")
@click.argument("user")
def share_revoke(namespace: str, user: str) -> None:
    """Stop sharing your NAMESPACE with USER (from their next request on)."""
    with Api.from_settings(settings().client) as api:
        api.revoke_share(namespace, user)
    console().print(escape(f"{user} no longer has {namespace}"))
