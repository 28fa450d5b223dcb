"""What every `memoria bench` command shares: the settings sections, the scratch database, the
corpus file, and `--json` reports with their provenance."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from app.cli import config
from app.db import Database
from app.embeddings import Embedder, build_embedder
from app.settings import Settings
from memoria_bench.config import BenchConfig
from memoria_bench.provenance import PROVENANCE, Start, command_line, provenance
from memoria_bench.scratch import bench_user, open_database, scratch_database, scratch_server

#: Where the `bench` group keeps the `Start` of the run (click's context meta, shared by subcommands).
START_KEY = "memoria_bench.start"


def bench_config(settings: Settings) -> BenchConfig:
    """The sections of `settings` the benchmarks run the product with."""
    return BenchConfig(
        database=settings.database,
        memories=settings.memories,
        recall=settings.recall,
        graph=settings.graph,
        hooks=settings.hooks,
        links=settings.links,
        capture=settings.capture,
        turn_context=settings.embeddings.turn_context,
    )


DATA_OPTION = click.option(
    "--data",
    "data",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    required=True,
    help="A folder in the locomo-dev format.",
)

SENTENCES_OPTION = click.option(
    "--sentences",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="persona-sentences/sentences.txt (default: ../shared/bench/… beside the repo).",
)
JSON_OPTION = click.option(
    "--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), help="Also write JSON."
)

Work = Callable[[BenchConfig, Embedder, Database, int], Awaitable[dict[str, Any]]]


def run_on_scratch(work: Work) -> dict[str, Any]:
    """Run `work` against a fresh, migrated scratch database with a bench user and loaded embedder."""
    settings = config.settings()
    embedder = build_embedder(settings.embeddings)
    sections = bench_config(settings)

    async def run(url: str) -> dict[str, Any]:
        await embedder.load()
        user_id = await bench_user(url)
        async with open_database(url, sections.database) as db:
            return await work(sections, embedder, db, user_id)

    with (
        scratch_server(settings.database.embedded_shared_buffers) as admin_url,
        scratch_database(admin_url, embedder.dimension) as (url, _),
    ):
        return asyncio.run(run(url))


def sentences_file(sentences: Path | None) -> Path:
    """`--sentences`, else the persona sentences beside the repository; a missing file is a usage error."""
    from memoria_bench.latency import DEFAULT_SENTENCES

    corpus = sentences or DEFAULT_SENTENCES
    if not corpus.is_file():
        raise click.BadParameter(f"{corpus} does not exist", param_hint="--sentences")
    return corpus


def save_report(report: dict[str, Any], json_out: Path | None, label: str | None = None) -> None:
    """`--json`: the report as JSON, where asked, with its provenance (the command as given, the
    commit, the date, the machine and its load before and after; `label` tells runs of one bench
    apart in the page name, e.g. the corpus); values JSON has no type for, such as dates, as text."""
    if json_out is None:
        return
    report[PROVENANCE] = run_provenance(label)
    json_out.write_text(json.dumps(report, indent=2, default=str))
    click.echo(f"wrote {json_out}", err=True)


def run_provenance(label: str | None = None) -> dict[str, Any]:
    """The provenance of the bench command running now (`memoria_bench.provenance`): what every
    file a bench writes carries, so a figure read from it names the commit that measured it."""
    ctx = click.get_current_context()
    start = ctx.meta.get(START_KEY) or Start()
    name = ctx.command.name or ctx.info_name or "bench"
    return provenance(name, command_line(ctx, ("memoria", "bench", name)), start, label)


def count_label(count: int) -> str:
    """`100k`, `1m`, `300`: a count as a page name shows it."""
    for size, suffix in ((1_000_000, "m"), (1_000, "k")):
        if count >= size and count % size == 0:
            return f"{count // size}{suffix}"
    return str(count)


def on_scratch_database(
    run: Callable[[str], Coroutine[Any, Any, dict[str, Any]]],
    print_report: Callable[[dict[str, Any], Console], None],
    json_out: Path | None,
    label: str | None = None,
) -> dict[str, Any]:
    """Run a bench against a scratch embedded server and database (dropped after), print its
    report and `save_report` it: the tail every bench that owns its database shares."""
    settings = config.settings()
    embedder = build_embedder(settings.embeddings)
    with (
        scratch_server(settings.database.embedded_shared_buffers) as admin_url,
        scratch_database(admin_url, embedder.dimension) as (url, _),
    ):
        report = asyncio.run(run(url))
    print_report(report, Console(width=140))
    save_report(report, json_out, label)
    return report
