"""Memories as JSON Lines, streamed both ways (behind `memoria export` / `memoria import`).

One memory per line in the shape `POST /v1/memories` takes, so an export is also a valid import
and files can be written by hand or by other tools. Both directions stream (a page or a batch at a
time) so a 100k-memory store never sits in memory. Import is idempotent because the API
deduplicates by content hash within a namespace: rerunning an interrupted import is always safe.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import click
from rich.progress import BarColumn, DownloadColumn, MofNCompleteColumn, Progress, TextColumn

from app.client.api import Api
from app.client.render import err_console

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
    "pinned",
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


def count_memories(api: Api, namespaces: Sequence[str]) -> int:
    """How many memories an export of `namespaces` (all when empty) will write: the progress total."""
    counts = {ns["name"]: ns["memories"] for ns in api.json("GET", "/v1/namespaces")}
    return sum(n for name, n in counts.items() if not namespaces or name in namespaces)


def export_memories(
    api: Api, out: IO[str], namespaces: Sequence[str], include_sensitive: bool, total: int | None = None
) -> int:
    """Write the memories of `namespaces` (all when empty), newest first, one per line; how many.

    With `total`, a progress bar on stderr when it is a terminal.
    """
    params = {"namespace": list(namespaces) or None, "include_sensitive": str(include_sensitive).lower()}
    written = 0
    with _progress(total is not None and err_console().is_terminal) as progress:
        task = progress.add_task("exporting", total=total or None)
        for memory in api.memories(params):
            out.write(json.dumps({k: memory.get(k) for k in FIELDS}, ensure_ascii=False) + "\n")
            written += 1
            progress.advance(task)
    return written


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


def import_memories(api: Api, file: IO[bytes], namespace: str | None, batch_size: int) -> tuple[int, int]:
    """Store every line of `file` in batches; (newly stored, already present). Safe to rerun."""
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

    with _bytes_progress(size) as progress:
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
    return stored, duplicates


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
