"""`memoria export` / `memoria import`: memories as JSON Lines, streamed both ways.

One memory per line in the shape `POST /v1/memories` takes, so an export is also a valid import
and files can be written by hand or by other tools. Both directions stream (a page or a batch at a
time) so a 100k-memory store never sits in memory. Import is idempotent because the API
deduplicates by content hash within a namespace: rerunning an interrupted import is always safe.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import click
from rich.progress import BarColumn, DownloadColumn, MofNCompleteColumn, Progress, TextColumn

from app.client.api import Api
from app.client.render import console, err_console

#: The fields of a stored memory that `POST /v1/memories` accepts; others (id, dates) are dropped.
FIELDS = (
    "content",
    "namespace",
    "category",
    "tags",
    "importance",
    "expanded_keywords",
    "is_sensitive",
    "source",
    "metadata",
)


def _progress(show: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=err_console(),
        disable=not show,
        transient=False,
    )


@click.command()
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Default: stdout.")
@click.option("-n", "--namespace", multiple=True, help="Repeatable. Default: every namespace.")
@click.option("--include-sensitive", is_flag=True, help="Sensitive memories are left out unless asked.")
def export(output: Path | None, namespace: tuple[str, ...], include_sensitive: bool) -> None:
    """Write memories as JSON Lines (newest first), ready for `memoria import`."""
    with Api.from_settings() as api:
        counts = {ns["name"]: ns["memories"] for ns in api.json("GET", "/v1/namespaces")}
        total = sum(n for name, n in counts.items() if not namespace or name in namespace)
        params = {"namespace": list(namespace) or None, "include_sensitive": str(include_sensitive).lower()}
        out: IO[str] = output.open("w", encoding="utf-8") if output else sys.stdout
        written = 0
        try:
            with _progress(output is not None and err_console().is_terminal) as progress:
                task = progress.add_task("exporting", total=total or None)
                for memory in api.memories(params):
                    out.write(json.dumps({k: memory.get(k) for k in FIELDS}, ensure_ascii=False) + "\n")
                    written += 1
                    progress.advance(task)
        finally:
            if output:
                out.close()
    err_console().print(f"exported {written} memories{f' to {output}' if output else ''}")


def _lines(stream: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    for number, line in enumerate(stream, 1):
        if line.strip():
            yield number, line


def _memory(number: int, line: bytes, namespace: str | None) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except ValueError as exc:
        raise click.ClickException(f"line {number}: not JSON ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("content"), str):
        raise click.ClickException(f'line {number}: want an object with a "content" string')
    memory = {k: data[k] for k in FIELDS if data.get(k) is not None}
    if namespace:
        memory["namespace"] = namespace
    return memory


@click.command("import")
@click.argument("file", type=click.File("rb"))
@click.option("-n", "--namespace", help="Store everything in this namespace instead of each line's.")
@click.option("--batch-size", type=click.IntRange(1, 1000), default=100, show_default=True)
def import_(file: IO[bytes], namespace: str | None, batch_size: int) -> None:
    """Store the memories in FILE (JSON Lines; "-" for stdin). Rerunning it stores nothing twice."""
    stored = duplicates = 0
    size = _size(file)

    def flush(batch: list[dict[str, Any]], first_line: int) -> None:
        nonlocal stored, duplicates
        try:
            results = api.json("POST", "/v1/memories", json=batch)["results"]
        except click.ClickException as exc:
            raise click.ClickException(
                f"lines from {first_line}: {exc.message} (stored so far: {stored}; rerunning is safe)"
            ) from exc
        duplicates += sum(r["duplicate"] for r in results)
        stored += sum(not r["duplicate"] for r in results)

    with Api.from_settings() as api, _bytes_progress(size) as progress:
        task = progress.add_task("importing", total=size)
        batch: list[dict[str, Any]] = []
        first = 0
        for number, line in _lines(file):
            if not batch:
                first = number
            batch.append(_memory(number, line, namespace))
            progress.advance(task, len(line))
            if len(batch) == batch_size:
                flush(batch, first)
                batch = []
        if batch:
            flush(batch, first)
    console().print(f"imported {stored + duplicates} memories: {stored} new, {duplicates} already present")


def _size(file: IO[bytes]) -> int | None:
    try:
        return Path(file.name).stat().st_size if file.name not in ("-", "<stdin>") else None
    except (OSError, AttributeError, TypeError):
        return None


def _bytes_progress(size: int | None) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        console=err_console(),
        disable=size is None or not err_console().is_terminal,
    )
