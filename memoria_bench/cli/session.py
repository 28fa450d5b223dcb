"""`memoria bench session`: what the hooks add to a whole session of a coding agent's real CLI (the
measuring is `memoria_bench.session`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click
from rich.console import Console

from app.cli import config
from memoria_bench.cli.common import JSON_OPTION, save_report
from memoria_bench.session.agents import SESSION_CLIS


@click.command("session")
@click.option(
    "--agent",
    type=click.Choice(sorted(SESSION_CLIS)),
    required=True,
    help="The coding agent whose real CLI to run (found at its $…_BIN, else installed by its .ci script).",
)
@click.option(
    "--runs", type=click.IntRange(2, 1000), default=20, show_default=True, help="Timed runs per arm."
)
@click.option(
    "--warmup", type=click.IntRange(0, 20), default=1, show_default=True, help="Untimed rounds first."
)
@click.option("--port", type=click.IntRange(1, 65535), help="The server's port (default: a free one).")
@JSON_OPTION
def session(agent: str, runs: int, warmup: int, port: int | None, json_out: Path | None) -> None:
    """A whole headless session of the agent's real CLI with Memoria's hooks installed and without,
    interleaved on the same prompts against a real `memoria serve`: each arm's median and p95, the
    time the hooks add with a bootstrap interval of the median's. Exits 1 when the target is not met."""
    from memoria_bench.session import SessionFailed, SessionOptions, bench_session, print_report

    config.settings()  # a bad setting is one line here, not a server that fails to start
    try:
        report = asyncio.run(bench_session(SessionOptions(agent, runs, warmup, port), Console(stderr=True)))
    except SessionFailed as exc:
        raise click.ClickException(str(exc)) from exc
    print_report(report, Console())
    save_report(report, json_out, label=agent)
    if not all(check["met"] for check in report["targets"]):
        raise SystemExit(1)
