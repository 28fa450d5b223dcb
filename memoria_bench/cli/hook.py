"""`memoria bench hook`: what the auto-recall hook adds to each prompt, against any running server
(the measuring is `memoria_bench.hook_latency`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from app.cli import config
from app.client.api import api_key
from app.hooks.hosts import CLAUDE_CODE, HOSTS
from memoria_bench.cli.common import save_report
from memoria_bench.hook_latency import COLUMNS, BenchFailed, bench_hook_latency, hook_targets
from memoria_hook_client.namespace import namespace_for_cwd


@click.command("hook")
@click.option("--url", help="Server base URL (default: MEMORIA_CLIENT__URL).")
@click.option("--key", help="API key (default: MEMORIA_CLIENT__API_KEY or the key file).")
@click.option("--namespace", help="Recall from this namespace (default: the one of --cwd, worked out here).")
@click.option("--cwd", default=os.getcwd, show_default="current directory", help="The session's directory.")
@click.option(
    "--agent",
    type=click.Choice(sorted(HOSTS)),
    default=CLAUDE_CODE.name,
    show_default=True,
    help="The coding agent whose prompt hook to time (its route, event name and `--agent`).",
)
@click.option("--runs", type=click.IntRange(2, 10_000), default=30, show_default=True)
@click.option("--warmup", type=click.IntRange(0, 100), default=3, show_default=True)
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), help="Also write JSON.")
def bench_hook(
    url: str | None,
    key: str | None,
    namespace: str | None,
    cwd: str,
    agent: str,
    runs: int,
    warmup: int,
    json_out: Path | None,
) -> None:
    """p50/p95 of the hook endpoint and of the command hook process, server up and down."""
    client = config.settings().client
    url = (url or client.url).rstrip("/")
    namespace = namespace or namespace_for_cwd(cwd, client.namespace_map, client.default_namespace)
    try:
        rows = bench_hook_latency(url, key or api_key(client), cwd, namespace, runs, warmup, HOSTS[agent])
    except BenchFailed as exc:
        raise click.ClickException(str(exc)) from exc
    table = Table(title=f"memoria bench hook --agent {agent}: {url}")
    for column in COLUMNS:
        table.add_column(column, justify="left" if column in ("measure", "note") else "right")
    for row in rows:
        table.add_row(*(str(row[column]) for column in COLUMNS))
    console = Console()
    console.print(table)
    checks = hook_targets(agent, rows)
    for check in checks:
        console.print(
            f"{'met' if check['met'] else 'NOT met'}: {check['target']} (measured {check['value']})"
        )
    sys.stdout.flush()
    save_report({"agent": agent, "targets": checks, "rows": rows}, json_out, label=agent)
