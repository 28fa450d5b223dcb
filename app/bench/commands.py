"""`memoria bench …` commands."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import click
from rich.console import Console

from app.bench.scratch import bench_user, open_services, scratch_database, scratch_server
from app.embeddings import build_embedder
from app.settings import Settings


@click.group()
def bench() -> None:
    """Benchmarks that print figures (quality, latency)."""


@bench.command("quality")
@click.option("--data", "data", type=click.Path(exists=True, file_okay=False, path_type=Path), required=True,
              help="A folder in the locomo-dev format.")
@click.option("--corpus", type=click.Choice(["turns", "facts"]), default="facts", show_default=True)
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), help="Also write JSON here.")
def quality(data: Path, corpus: str, json_out: Path | None) -> None:
    """Load a corpus through the real store path into a scratch database and score recall."""
    from app.bench.quality import bench_quality, print_report

    settings = Settings()
    embedder = build_embedder(settings.embeddings)

    async def run(url: str) -> dict[str, object]:
        await embedder.load()
        user_id = await bench_user(url)
        async with open_services(url, settings, embedder) as db:
            return await bench_quality(url, settings, embedder, db, user_id, data, corpus)

    with scratch_server() as admin_url, scratch_database(admin_url, embedder.dimension) as (url, _):
        report = asyncio.run(run(url))
    print_report(report, Console())
    if json_out is not None:
        json_out.write_text(json.dumps(report, indent=2))
        click.echo(f"wrote {json_out}", err=True)
