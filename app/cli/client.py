"""`memoria remember | recall | list | forget | import | export | login`: the API from a terminal
(`memoria status` is `app.cli.status`).

The commands only parse options, load the settings once and print; talking to the server and JSON
Lines streaming live in `app.client` (which gets `settings.client` passed in), the key file in
`memoria_hook_client.environment` (shared with the command hook).
"""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime
from pathlib import Path
from typing import IO, Any

import click
from rich.markup import escape

from app.cli.config import settings
from app.client.api import Api, RequestFailed
from app.client.render import console, err_console, memory_lines, memory_table, print_json, recall_table
from app.client.transfer import count_memories, export_memories, import_memories
from app.settings import Settings
from memoria_hook_client.environment import write_key_file
from memoria_hook_client.namespace import namespace_for_cwd


def current_namespace(config: Settings) -> str:
    """The namespace the hook recalls from in this directory, so what you remember here comes back here."""
    client = config.client
    return namespace_for_cwd(os.getcwd(), client.namespace_map, client.default_namespace) or "default"


class Timestamp(click.ParamType[datetime]):
    """An ISO 8601 date or time (`2026-03-01`, `2026-03-01T09:30:00Z`); without a zone, this
    machine's local time, as a person at a terminal means it."""

    name = "TIMESTAMP"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> datetime:
        if isinstance(value, datetime):
            return value
        try:
            parsed = datetime.fromisoformat(str(value))
        except ValueError:
            self.fail(f"{value!r} is not an ISO 8601 date or time (e.g. 2026-03-01T09:30:00Z)", param, ctx)
        return parsed if parsed.tzinfo is not None else parsed.astimezone()


INCLUDE_SUPERSEDED = click.option(
    "--include-superseded",
    is_flag=True,
    help="Versions no longer current too: superseded memories and those past their valid_to.",
)
AS_OF = click.option(
    "--as-of", type=Timestamp(), metavar="TS", help="What held at this time (ISO 8601; default: now)."
)


def _split(values: tuple[str, ...]) -> list[str]:
    """`--tags a,b --tags c` -> [a, b, c]."""
    return [tag.strip() for value in values for tag in value.split(",") if tag.strip()]


@click.command()
@click.argument("content")
@click.option(
    "-n", "--namespace", help="Default: this git repository's (see `memoria namespaces`), else default."
)
@click.option("-c", "--category", help="e.g. decision, preference, fact, runbook.")
@click.option("-t", "--tags", multiple=True, help="Comma-separated; repeatable.")
@click.option("-i", "--importance", type=click.FloatRange(0, 1), default=0.5, show_default=True)
@click.option("--sensitive", is_flag=True, help="Keep it out of lists, recall and hooks unless asked.")
@click.option(
    "--supersedes",
    type=click.IntRange(1),
    multiple=True,
    metavar="ID",
    help="A memory of the same namespace this one replaces (it leaves recall and hooks); repeatable.",
)
def remember(
    content: str,
    namespace: str | None,
    category: str | None,
    tags: tuple[str, ...],
    importance: float,
    sensitive: bool,
    supersedes: tuple[int, ...],
) -> None:
    """Store CONTENT as a memory ("-" reads it from stdin)."""
    config = settings()
    if content == "-":
        content = sys.stdin.read().strip()
    body: dict[str, Any] = {
        "content": content,
        "namespace": namespace or current_namespace(config),
        "tags": _split(tags),
        "importance": importance,
        "is_sensitive": sensitive,
        "source": "memoria-cli",
        "supersedes": list(supersedes),
    }
    if category:
        body["category"] = category
    with Api.from_settings(config.client) as api:
        stored = api.json("POST", "/v1/memories", json=body)
    verb = "already remembered as" if stored["duplicate"] else "remembered"
    replaced = "".join(f", superseding #{old}" for old in stored.get("superseded", []))
    console().print(f"{verb} #{stored['id']} in {stored['namespace']}{replaced}")


@click.command()
@click.argument("query")
@click.option("-n", "--namespace", multiple=True, help="Repeatable. Default: all your namespaces.")
@click.option("--here", is_flag=True, help="Only this repository's namespace (what the hook would see).")
@click.option("-l", "--limit", type=click.IntRange(1, 100), default=10, show_default=True)
@click.option("-c", "--category", help="Only this category.")
@click.option("-t", "--tags", multiple=True, help="Only memories with any of these tags.")
@click.option("--explain", is_flag=True, help="Show each leg's score and the fusion settings.")
@INCLUDE_SUPERSEDED
@AS_OF
@click.option("--json", "as_json", is_flag=True, help="Print the raw API answer.")
def recall(
    query: str,
    namespace: tuple[str, ...],
    here: bool,
    limit: int,
    category: str | None,
    tags: tuple[str, ...],
    explain: bool,
    include_superseded: bool,
    as_of: datetime | None,
    as_json: bool,
) -> None:
    """Find the memories that matter for QUERY (hybrid lexical + dense search)."""
    config = settings()
    names = [*namespace, *([current_namespace(config)] if here else [])]
    filters: dict[str, Any] = {}
    if category:
        filters["category"] = category
    if tags:
        filters["tags"] = _split(tags)
    if include_superseded:
        filters["include_superseded"] = True
    if as_of is not None:
        filters["as_of"] = as_of.isoformat()
    body: dict[str, Any] = {"query": query, "limit": limit, "explain": True, "filters": filters}
    if names:
        body["namespaces"] = names
    with Api.from_settings(config.client) as api:
        result = api.json("POST", "/v1/recall", json=body)
    if as_json:
        print_json(result)
        return
    if not result["results"]:
        console().print("no memories match")
    else:
        console().print(recall_table(result, explain))
    unavailable = {leg: state for leg, state in result.get("legs", {}).items() if state not in ("ok", "off")}
    for leg, state in unavailable.items():
        err_console().print(f"[yellow]the {leg} leg did not run: {state}[/yellow]")
    if explain and result.get("settings"):
        knobs = ", ".join(f"{key}={value}" for key, value in result["settings"].items())
        console().print(f"[dim]{knobs}[/dim]")


@click.command("list")
@click.option("-n", "--namespace", multiple=True, help="Repeatable. Default: all your namespaces.")
@click.option("-c", "--category")
@click.option("-s", "--source", help="Only from this source: the agent an exchange came from, e.g. codex.")
@click.option("-t", "--tags", multiple=True, help="Memories with any of these tags.")
@click.option("-l", "--limit", type=click.IntRange(1, 200), default=20, show_default=True)
@click.option("--all", "everything", is_flag=True, help="Every match, page after page.")
@click.option("--include-sensitive", is_flag=True)
@INCLUDE_SUPERSEDED
@AS_OF
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def list_memories(
    namespace: tuple[str, ...],
    category: str | None,
    source: str | None,
    tags: tuple[str, ...],
    limit: int,
    everything: bool,
    include_sensitive: bool,
    include_superseded: bool,
    as_of: datetime | None,
    as_json: bool,
) -> None:
    """List memories, newest first: a table on a terminal, tab-separated lines when piped."""
    params: dict[str, Any] = {
        "namespace": list(namespace) or None,
        "category": category,
        "source": source,
        "tags": _split(tags) or None,
        "include_sensitive": str(include_sensitive).lower(),
        "include_superseded": str(include_superseded).lower(),
        "as_of": as_of.isoformat() if as_of is not None else None,
    }
    with Api.from_settings(settings().client) as api:
        items: list[dict[str, Any]] = []
        for item in api.memories(params, page_size=limit):
            items.append(item)
            if len(items) >= limit and not everything:
                break
    if as_json:
        for item in items:
            click.echo(json.dumps(item, ensure_ascii=False))
    elif items and console().is_terminal:
        console().print(memory_table(items))
    elif items:
        for line in memory_lines(items):
            click.echo(line)
    else:
        console().print("no memories")


@click.command()
@click.argument("memory_id", type=click.IntRange(1))
@click.option("--purge", is_flag=True, help="Remove the row instead of soft-deleting it.")
def forget(memory_id: int, purge: bool) -> None:
    """Delete memory MEMORY_ID (soft: it can still be read with include_deleted)."""
    with Api.from_settings(settings().client) as api:
        try:
            api.send("DELETE", f"/v1/memories/{memory_id}", params={"purge": str(purge).lower()})
        except RequestFailed as exc:
            if exc.status == 404:
                raise RequestFailed(f"no memory #{memory_id} (or it is not yours)", 404) from exc
            raise
    console().print(f"{'purged' if purge else 'forgot'} #{memory_id}")


@click.command()
@click.option("--key-file", type=click.Path(dir_okay=False, path_type=Path), help="Default: from settings.")
@click.option("--no-check", is_flag=True, help="Save without asking the server whether the key works.")
def login(key_file: Path | None, no_check: bool) -> None:
    """Save an API key (from stdin, or typed hidden) to a file only you can read."""
    client = settings().client
    if sys.stdin.isatty():
        key = click.prompt("API key", hide_input=True).strip()
    else:
        key = sys.stdin.readline().strip()
    if not key:
        raise click.ClickException("no key given")
    if not no_check:
        with Api(client.url, key, client.timeout_s) as api:
            api.send("GET", "/v1/namespaces")
    path = (key_file or client.key_file).expanduser()
    write_key_file(path, key)
    console().print(f"saved the key to {path} (readable by you only)")


@click.command()
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Default: stdout.")
@click.option("-n", "--namespace", multiple=True, help="Repeatable. Default: every namespace.")
@click.option("--include-sensitive", is_flag=True, help="Sensitive memories are left out unless asked.")
def export(output: Path | None, namespace: tuple[str, ...], include_sensitive: bool) -> None:
    """Write memories as JSON Lines (newest first), ready for `memoria import`."""
    with Api.from_settings(settings().client) as api:
        # counted first: an unreachable server or a refused key must not truncate an earlier export;
        # the count is the progress bar's total, shown only when the JSON goes to a file
        total = count_memories(api, namespace) if output else None
        out: IO[str] = output.open("w", encoding="utf-8") if output else sys.stdout
        try:
            written = export_memories(api, out, namespace, include_sensitive, total)
        finally:
            if output:
                out.close()
    err_console().print(f"exported {written} memories{f' to {output}' if output else ''}")


@click.command("import")
@click.argument("file", type=click.File("rb"))
@click.option("-n", "--namespace", help="Store everything in this namespace instead of each line's.")
@click.option("--batch-size", type=click.IntRange(1, 1000), default=100, show_default=True)
def import_(file: IO[bytes], namespace: str | None, batch_size: int) -> None:
    """Store the memories in FILE (JSON Lines; "-" for stdin), then the links among them. Rerunning
    it stores nothing twice."""
    with Api.from_settings(settings().client) as api:
        done = import_memories(api, file, namespace, batch_size)
    console().print(
        f"imported {done.stored + done.duplicates} memories: {done.stored} new, "
        f"{done.duplicates} already present" + (f"; {done.linked} links" if done.linked else "")
    )
    for reason in done.skipped[:SKIPPED_SHOWN]:
        err_console().print(escape(f"skipped {reason}"))
    if len(done.skipped) > SKIPPED_SHOWN:
        err_console().print(f"… and {len(done.skipped) - SKIPPED_SHOWN} more links skipped")


SKIPPED_SHOWN = 20
"""Skipped links `memoria import` names one by one; past these, it counts them."""


COMMANDS: list[click.Command] = [
    remember,
    recall,
    list_memories,
    forget,
    login,
    export,
    import_,
]
