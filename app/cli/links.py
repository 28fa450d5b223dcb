"""`memoria link | unlink | links`: typed links between two memories of one namespace.

Read "ID KIND TARGET" as a sentence: `memoria link 12 supersedes 5` says memory 12 replaces memory
5, which then leaves recall, hooks and session start; `resolved-by` names the fix of a problem,
which comes along when the problem is recalled; `see-also` and `part-of` are shown beside it.
"""

from __future__ import annotations

import click
from rich.markup import escape

from app.cli.config import settings
from app.client.api import Api, RequestFailed
from app.client.render import console, links_table, print_json
from app.links.schemas import LINK_KINDS

KIND = click.Choice(LINK_KINDS)


def _not_yours(exc: RequestFailed, what: str) -> RequestFailed:
    if exc.status == 404:
        return RequestFailed(f"{what} (or it is not yours)", 404)
    return exc


@click.command()
@click.argument("memory_id", type=click.IntRange(1))
@click.argument("kind", type=KIND)
@click.argument("target", type=click.IntRange(1))
def link(memory_id: int, kind: str, target: int) -> None:
    """Link memory MEMORY_ID to TARGET: MEMORY_ID supersedes / resolved-by / see-also / part-of TARGET."""
    with Api.from_settings(settings().client) as api:
        try:
            api.send("POST", f"/v1/memories/{memory_id}/links", json={"kind": kind, "target": target})
        except RequestFailed as exc:
            raise _not_yours(exc, f"no memory #{memory_id} or #{target}") from exc
    console().print(f"linked #{memory_id} {kind} #{target}")


@click.command()
@click.argument("memory_id", type=click.IntRange(1))
@click.argument("kind", type=KIND)
@click.argument("target", type=click.IntRange(1))
def unlink(memory_id: int, kind: str, target: int) -> None:
    """Undo the link MEMORY_ID KIND TARGET (a memory it superseded holds again)."""
    with Api.from_settings(settings().client) as api:
        try:
            api.send("DELETE", f"/v1/memories/{memory_id}/links/{kind}/{target}")
        except RequestFailed as exc:
            raise _not_yours(exc, f"no link #{memory_id} {kind} #{target}") from exc
    console().print(f"unlinked #{memory_id} {kind} #{target}")


@click.command()
@click.argument("memory_id", type=click.IntRange(1))
@click.option("--json", "as_json", is_flag=True, help="Print the raw API answer.")
def links(memory_id: int, as_json: bool) -> None:
    """The links of memory MEMORY_ID, both ways."""
    with Api.from_settings(settings().client) as api:
        try:
            found = api.json("GET", f"/v1/memories/{memory_id}/links")
        except RequestFailed as exc:
            raise _not_yours(exc, f"no memory #{memory_id}") from exc
    if as_json:
        print_json(found)
        return
    if found["superseded_by"] is not None:
        console().print(f"#{memory_id} is superseded by #{found['superseded_by']}: recall shows that one")
    if found["links"]:
        console().print(links_table(found))
    else:
        console().print(escape(f"#{memory_id} has no links"))


COMMANDS: list[click.Command] = [link, unlink, links]
