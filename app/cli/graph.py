"""`memoria graph …` commands."""

from __future__ import annotations

import asyncio

import click
from rich.progress import Progress

from app.cli import config
from app.db import create_database
from app.embeddings import build_embedder
from app.graph.rebuild import rebuild_graph


@click.group()
def graph() -> None:
    """The concept graph."""


@graph.command("rebuild")
@click.option("--namespace", help="Only this namespace (default: all).")
@click.option("--user", help="Only this user's namespaces.")
@click.option("--batch", default=200, show_default=True, help="Memories per transaction.")
def rebuild(namespace: str | None, user: str | None, batch: int) -> None:
    """Recompute concepts and edges from the memories (needed after changing extractor settings)."""
    settings = config.settings()

    async def run(url: str) -> tuple[int, int]:
        embedder = build_embedder(settings.embeddings) if settings.graph.concept_embeddings else None
        if embedder is not None:
            await embedder.load()
        db = await create_database(url, settings.database)
        try:
            with Progress(transient=True) as progress:
                task = progress.add_task("extracting concepts", total=None)

                def advance(done: int, total: int) -> None:
                    progress.update(task, completed=done, total=total)

                return await rebuild_graph(
                    db.write, settings.graph, embedder, namespace, user, batch, advance
                )
        finally:
            await db.close()

    with config.database(settings) as url:
        namespaces, memories = asyncio.run(run(url))
    click.echo(f"rebuilt the graph of {namespaces} namespace(s) from {memories} memories", err=True)
