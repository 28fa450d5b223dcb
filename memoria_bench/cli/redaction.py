"""`memoria bench secrets`: credential detection and redaction on a generated corpus (no database)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from memoria_bench.cli.common import JSON_OPTION, save_report


@click.command("secrets")
@click.option("--seed", type=int, default=16, show_default=True, help="Seed of the generated corpus.")
@click.option("--secrets", "n_secrets", type=click.IntRange(min=1), default=264, show_default=True)
@click.option("--lookalikes", type=click.IntRange(min=1), default=200, show_default=True)
@click.option(
    "--long-memories",
    type=click.IntRange(min=1),
    default=200,
    show_default=True,
    help="~4,000-character memories timed (half hold a credential).",
)
@click.option(
    "--repeat", type=click.IntRange(min=1), default=5, show_default=True, help="Runs per memory (median)."
)
@JSON_OPTION
def secrets(
    seed: int, n_secrets: int, lookalikes: int, long_memories: int, repeat: int, json_out: Path | None
) -> None:
    """Credential detection on a generated corpus (fake credentials of every kind in memory-like
    sentences, and look-alikes that are not credentials): recall per kind, false positive rate, and
    the time redaction (and sealing) adds per memory. No database. Exits 1 when a target is not met."""
    from memoria_bench.secrets import SecretsBenchOptions, bench_secrets, print_report

    options = SecretsBenchOptions(
        seed=seed, secrets=n_secrets, lookalikes=lookalikes, long_memories=long_memories, repeat=repeat
    )
    report = bench_secrets(options)
    print_report(report, Console(width=140))
    save_report(report, json_out)
    if not all(check["met"] for check in report["targets"]):
        raise SystemExit(1)
