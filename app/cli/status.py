"""`memoria status`: the server, then this machine's side of every coding agent, as text or `--json`.

The server part asks `/readyz` and `/v1/namespaces`; the rest is read locally, so it is shown when
the server is down too: Claude Code's hooks per settings scope and its MCP registrations (in
detail, as `memoria hook install` and `memoria mcp install` write them), the capture spool, the
waiting flusher (`memoria_hook_client.flush_wait`) and the last outcome of each hook (of any
agent), then per agent its hooks, MCP registration, key, spool and last outcomes
(`app.cli.host_status`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from app.cli.config import settings
from app.cli.host_status import client_env, describe_record, host_report, print_hosts
from app.cli.mcp import print_registrations
from app.client.api import Api
from app.client.render import console
from app.client.settings import ClientSettings
from app.hooks import install as hook_setup
from memoria_hook_client import state as hook_state
from memoria_hook_client.capture_worker import FLUSH_ATTEMPT
from memoria_hook_client.flush_wait import waiting
from memoria_hook_client.namespace import git_root

LAST = (
    ("capture", "capture"),
    ("flush", "flush"),
    ("recall", "recall"),
    ("session-start", "session"),
)
"""The hook outcomes `memoria status` shows last, and their labels."""


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead (same parts).")
def status(as_json: bool) -> None:
    """Server, database, embedder and your memory counts; then Claude Code's hooks and MCP
    registration, the capture spool, a flusher waiting for the server and the last hook outcomes;
    then, per coding agent, its hooks, MCP registration, whether its URL and key answer, its
    spooled captures and last capture / recall (all but the server's part shown when the server
    is down too). Exits 1 unless the server is ready."""
    client = settings().client
    env = client_env(client.state_dir)
    project = Path(git_root(str(Path.cwd())) or Path.cwd())
    server = server_report(client)
    hosts = host_report(project, env, client.url)
    local = local_report(env)
    if as_json:
        click.echo(json.dumps({"server": server, "agents": hosts, **local}, indent=2, ensure_ascii=False))
    else:
        print_server(server)
        _hooks_status(project)
        print_registrations(project)
        print_local(local)
        print_hosts(hosts)
    if not server["ready"]:
        raise click.exceptions.Exit(1)


def server_report(client: ClientSettings) -> dict[str, Any]:
    """{"url", "ready", "error", "checks", "namespaces"}: what the server says to this key."""
    report: dict[str, Any] = {
        "url": client.url,
        "ready": False,
        "error": None,
        "checks": None,
        "namespaces": None,
    }
    try:
        with Api.from_settings(client) as api:
            # `/readyz` names the failing check only for a key with the `admin` scope
            ready = api.send("GET", "/readyz", accept=(503,))
            report["ready"] = ready.status_code == 200
            report["checks"] = ready.json().get("checks")
            report["namespaces"] = api.json("GET", "/v1/namespaces")
    except click.ClickException as exc:  # unreachable, refused key, no key: the local part still helps
        report["ready"] = False
        report["error"] = exc.format_message()
    return report


def print_server(report: dict[str, Any]) -> None:
    url = escape(report["url"])
    if report["namespaces"] is None and report["error"]:
        console().print(f"server     {url}  [red]{escape(report['error'])}[/red]")
        return
    console().print(
        f"server     {url}  {'[green]ready[/green]' if report['ready'] else '[red]not ready[/red]'}"
    )
    checks = report["checks"]
    if checks is None:
        console().print("checks     [dim](shown for a key with the admin scope)[/dim]")
    for check, state in (checks or {}).items():
        colour = "green" if state == "ok" else "red"
        console().print(f"{check:<10} [{colour}]{state}[/{colour}]")
    namespaces = report["namespaces"] or []
    total = sum(ns["memories"] for ns in namespaces)
    console().print(f"key        [green]ok[/green]  {len(namespaces)} namespaces, {total} memories")
    for ns in namespaces:
        console().print(f"  {ns['memories']:>8}  {escape(ns['name'])}")


def _hooks_status(project: Path) -> None:
    """Memoria's hooks in each settings scope Claude Code would read for a session started here."""
    console().print("hooks")
    for scope in ("user", "project", "local"):
        path = hook_setup.settings_path(scope, project)
        found = hook_setup.read_installed(path)
        if found is None:
            console().print(f"  {scope:<8} [red]unreadable[/red]  {escape(str(path))}")
        elif not found:
            console().print(f"  {scope:<8} [dim]none[/dim]  {escape(str(path))}")
        else:
            console().print(f"  {scope:<8} {escape(str(path))}")
            for event, entries in found.items():
                kinds = ", ".join(hook_setup.describe(entry) for entry in entries)
                console().print(f"    {event:<17} {kinds}")


def local_report(env: dict[str, str]) -> dict[str, Any]:
    """{"spool", "flusher", "last"}: the client's state directory, as the hooks left it."""
    records = hook_state.read_status(env)
    return {
        "spool": {**hook_state.spool_summary(env), "dir": hook_state.state_dir(env)},
        "flusher": waiting(env),
        "last": {what: records.get(what) for what in (*(name for name, _ in LAST), FLUSH_ATTEMPT)},
    }


def print_local(local: dict[str, Any]) -> None:
    """The capture spool, the waiting flusher and the last outcome of each hook."""
    spool = local["spool"]
    where = escape(spool["dir"])
    if spool["exchanges"] or spool["batches"]:
        console().print(
            f"spool      [yellow]{spool['exchanges']} exchanges in {spool['batches']} batches "
            f"({spool['bytes']} bytes) waiting for the server[/yellow]  {where}"
        )
    else:
        console().print(f"spool      empty  {where}")
    flusher = local["flusher"]
    if flusher is not None:
        console().print(
            escape(
                f"flusher    waiting for the server since {flusher.get('since')}, "
                f"until {flusher.get('until')}  attempts {flusher.get('attempts')}  "
                f"last {flusher.get('last_outcome')}"
            )
        )
    records = local["last"]
    for what, label in LAST:
        record = records.get(what)
        console().print(escape(f"last {label:<9} {describe_record(record)}"))
        if what == "flush":
            _flush_counts(record if isinstance(record, dict) else {})
            _attempt_since(record if isinstance(record, dict) else {}, records.get(FLUSH_ATTEMPT))
        if what == "recall" and isinstance(record, dict):
            _without_context(record)


def _attempt_since(flush: dict[str, Any], attempt: Any) -> None:
    """A flush that sent nothing after the last one that sent: said under it, never in its place."""
    if isinstance(attempt, dict) and str(attempt.get("at")) >= str(flush.get("at")):
        console().print(
            escape(
                f"  then     {attempt.get('at')}  {attempt.get('outcome')}, sent nothing, "
                f"{attempt.get('left')} left"
            )
        )


def _flush_counts(record: dict[str, Any]) -> None:
    """What the server left out of the last flush, per skip rule, and how many exchanges it folded
    into episodes they repeat (the capture route's answer, recorded by the flusher)."""
    skipped = record.get("skipped")
    if isinstance(skipped, dict) and skipped:
        reasons = ", ".join(f"{reason} {count}" for reason, count in sorted(skipped.items()))
        console().print(escape(f"  skipped  {reasons}"))
    folded = record.get("folded")
    if isinstance(folded, int) and folded:
        console().print(f"  folded   {folded} repeats into earlier episodes")


def _without_context(record: dict[str, Any]) -> None:
    """How many prompts the recall hook left without context, per reason (trivial, floor, seen,
    budget, no-results), as the hook client counted them since its state directory was made."""
    counts = record.get("without_context")
    if isinstance(counts, dict) and counts:
        reasons = ", ".join(f"{reason} {count}" for reason, count in sorted(counts.items()))
        console().print(escape(f"  no context  {reasons}"))
