"""`memoria embeddings backfill|reembed`: fill missing vectors, or move to another model/width."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import asyncpg
import click
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from app.cli import config
from app.core.settings import describe_invalid
from app.embeddings.backfill import backfill as run_backfill
from app.embeddings.base import EmbeddingError
from app.embeddings.factory import build_embedder
from app.embeddings.jobs import JobError, connect
from app.embeddings.reembed import ReembedOptions
from app.embeddings.reembed import reembed as run_reembed
from app.embeddings.sensitive import SensitiveRouter, guarded
from app.embeddings.settings import EmbeddingSettings
from app.settings import Settings

T = TypeVar("T")
_console = Console(stderr=True)


class RichProgress:
    """One bar per phase, on stderr."""

    def __init__(self, bars: Progress) -> None:
        self._bars = bars
        self._task: TaskID | None = None

    def start(self, phase: str, total: int) -> None:
        self._task = self._bars.add_task(phase, total=total)

    def advance(self, done: int) -> None:
        if self._task is not None:
            self._bars.advance(self._task, done)


@contextmanager
def _progress() -> Iterator[RichProgress]:
    bars = Progress(
        TextColumn("{task.description:>9}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=_console,
    )
    with bars:
        yield RichProgress(bars)


def _run(
    settings: Settings,
    router: SensitiveRouter,
    job: Callable[[asyncpg.Connection, RichProgress], Awaitable[T]],
) -> T:
    """Load the models, connect to the configured (or embedded) database, run `job`."""

    async def runner(url: str) -> T:
        await router.load()
        conn = await connect(url)
        try:
            with _progress() as progress:
                return await job(conn, progress)
        finally:
            await conn.close()
            await router.close()

    try:
        with config.database(settings) as url:
            return asyncio.run(runner(url))
    except (JobError, EmbeddingError) as exc:
        raise click.ClickException(str(exc)) from exc


@click.group()
def embeddings() -> None:
    """Fill in missing embeddings, or re-embed everything with another model."""


@embeddings.command()
@click.option("--batch-size", type=click.IntRange(1, 1000), help="Memories per batch (default: settings).")
def backfill(batch_size: int | None) -> None:
    """Embed memories stored without a vector (provider outages). Resumable: re-run to continue.

    Sensitive memories are skipped when the provider is hosted and no sensitive_local_model is set.
    """
    settings = config.settings()
    router = guarded(build_embedder(settings.embeddings))
    size = batch_size or settings.embeddings.batch_size
    report = _run(
        settings,
        router,
        lambda conn, bar: run_backfill(
            conn, router, batch_size=size, progress=bar, context=settings.embeddings.turn_context
        ),
    )
    click.echo(f"embedded {report.embedded} memories with {router.model_id}", err=True)
    if report.sensitive_left:
        click.echo(
            f"{report.sensitive_left} sensitive memories stay lexical-only (hosted provider, "
            "no MEMORIA_EMBEDDINGS__SENSITIVE_LOCAL_MODEL)",
            err=True,
        )


def target_settings(current: EmbeddingSettings, overrides: dict[str, Any]) -> EmbeddingSettings:
    """The current embedding settings with the target's provider/model/width; validated again."""
    values = current.model_dump() | {k: v for k, v in overrides.items() if v is not None}
    values["provider"] = overrides["provider"]
    values["model"] = overrides.get("model")
    values["dimension"] = overrides.get("dimension")
    try:
        return EmbeddingSettings.model_validate(values)
    except ValidationError as exc:
        raise click.ClickException(
            f"invalid reembed target: {describe_invalid(exc, env_prefix=None)}"
        ) from exc


@embeddings.command()
@click.option(
    "--provider", required=True, type=click.Choice(["local", "voyage", "openai-compatible"]), help="Target."
)
@click.option("--model", help="Target model (default: the provider's).")
@click.option(
    "--dimension", type=click.IntRange(1, 4000), help="Target width for models Memoria does not know."
)
@click.option("--base-url", help="Endpoint of the target (openai-compatible) provider.")
@click.option("--sensitive-local-model", help="Local model for sensitive memories when the target is hosted.")
@click.option("--batch-size", type=click.IntRange(1, 1000), help="Memories per batch (default: settings).")
def reembed(
    provider: str,
    model: str | None,
    dimension: int | None,
    base_url: str | None,
    sensitive_local_model: str | None,
    batch_size: int | None,
) -> None:
    """Re-embed every memory with another model (and width) through a side column, then swap.

    Resumable: re-run the same command after an interruption. Afterwards configure the service
    with the same provider/model and restart it. Run it on a direct (not pooled) database URL.
    """
    settings = config.settings()
    target = target_settings(
        settings.embeddings,
        {
            "provider": provider,
            "model": model,
            "dimension": dimension,
            "base_url": base_url,
            "sensitive_local_model": sensitive_local_model,
        },
    )
    try:
        router = guarded(build_embedder(target))
    except (ValueError, EmbeddingError) as exc:
        raise click.ClickException(str(exc)) from exc
    options = ReembedOptions(
        batch_size=batch_size or target.batch_size, context=settings.embeddings.turn_context
    )
    report = _run(
        settings, router, lambda conn, bar: run_reembed(conn, router, options=options, progress=bar)
    )
    if report.nothing_to_do:
        click.echo(f"every memory is already embedded with {report.model}", err=True)
    else:
        click.echo(
            f"now {report.dimension}-d {report.model}: {report.embedded} embedded, {report.copied} kept",
            err=True,
        )
    for column in report.cleared_columns:
        click.echo(f"{column} held {report.dimension}-incompatible vectors and was reset", err=True)
    click.echo(
        f"configure MEMORIA_EMBEDDINGS__PROVIDER={provider} MEMORIA_EMBEDDINGS__MODEL={report.model} "
        "and restart the service",
        err=True,
    )
