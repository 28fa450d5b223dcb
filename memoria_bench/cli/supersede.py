"""`memoria bench supersede`: the automatic supersede rule on labelled pairs (no database)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click
from rich.console import Console

from app.cli import config
from app.embeddings import build_embedder
from memoria_bench.cli.common import JSON_OPTION, save_report


@click.command("supersede")
@click.option(
    "--pairs",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Labelled pairs, JSON lines (default: the dev set shipped beside the bench).",
)
@click.option("--bootstrap", type=click.IntRange(min=100), default=2000, show_default=True, help="Rounds.")
@click.option("--seed", type=int, default=35, show_default=True, help="Seed of the bootstrap.")
@JSON_OPTION
def supersede(pairs: Path | None, bootstrap: int, seed: int, json_out: Path | None) -> None:
    """Precision and recall of the supersede rule on labelled pairs of memories, embedded with the
    configured embedder: of its `confident` calls (links made without anyone asking) and of
    confident+suggest, each with a bootstrap 95% interval, and the wrong calls."""
    from memoria_bench.supersede import DEV_PAIRS, bench_supersede, load_pairs, print_report

    source = pairs or DEV_PAIRS
    try:
        labelled = load_pairs(source)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--pairs") from exc
    embedder = build_embedder(config.settings().embeddings)

    async def run() -> dict[str, object]:
        await embedder.load()
        try:
            return await bench_supersede(labelled, embedder, bootstrap=bootstrap, seed=seed)
        finally:
            await embedder.close()

    report = asyncio.run(run())
    print_report(report, Console(width=160))
    save_report(report, json_out, source.stem.replace("_", "-"))
