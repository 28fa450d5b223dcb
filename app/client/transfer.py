"""Memories as JSON Lines, streamed both ways (behind `memoria export` / `memoria import`).

One memory per line in the shape `POST /v1/memories` takes, so an export is also a valid import
and files can be written by hand or by other tools. Both directions stream (a page or a batch at a
time) so a 100k-memory store never sits in memory. Import is idempotent because the API
deduplicates by content hash within a namespace: rerunning an interrupted import is always safe.

Links between memories travel too: each memory line carries the `id` it had, and a `{"link":
{source, kind, target, origin, reason}}` line names a link by those ids. An export writes its links
first (`GET /v1/links`), so an import reading line by line knows which memories a supersede in the
file ends: it stores them without their `valid_to` and lets the link end them, as the link did where
they came from (undoing it later gives them back). The import makes the links once every memory is
stored, mapping the file's ids to the stored ones; a link whose memory is not in the file, or that
the server refuses (a cycle, a memory superseded by another already), is reported and skipped.
Superseded memories and those past their validity are exported too (`include_superseded`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import click
from rich.progress import BarColumn, DownloadColumn, MofNCompleteColumn, Progress, TextColumn

from app.client.api import Api, RequestFailed
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
    "valid_from",
    "valid_to",
)
LINK_FIELDS = ("source", "kind", "target", "origin", "reason")


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
    """Write the links among the memories of `namespaces` (all when empty), then the memories,
    newest first, one per line; how many memories.

    With `total`, a progress bar on stderr when it is a terminal.
    """
    params = {"namespace": list(namespaces) or None, "include_sensitive": str(include_sensitive).lower()}
    links = api.json("GET", "/v1/links", params={k: v for k, v in params.items() if v is not None})
    for link in links:
        out.write(json.dumps({"link": {k: link.get(k) for k in LINK_FIELDS}}, ensure_ascii=False) + "\n")
    written = 0
    with _progress(total is not None and err_console().is_terminal) as progress:
        task = progress.add_task("exporting", total=total or None)
        for memory in api.memories({**params, "include_superseded": "true"}):
            out.write(json.dumps(_exported(memory), ensure_ascii=False) + "\n")
            written += 1
            progress.advance(task)
    return written


def _exported(memory: dict[str, Any]) -> dict[str, Any]:
    """A listed memory as an import line: what `POST /v1/memories` takes, its id for the links, and
    when it started to hold (`valid_from`, else when it was stored), which a copy keeps."""
    line = {k: memory.get(k) for k in FIELDS} | {"id": memory["id"]}
    line["valid_from"] = memory.get("valid_from") or memory["created_at"]
    return line


def _lines(stream: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    for number, line in enumerate(stream, 1):
        if line.strip():
            yield number, line


def _record(number: int, line: bytes) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except ValueError as exc:
        raise click.ClickException(f"line {number}: not JSON ({exc})") from exc
    if isinstance(data, dict) and isinstance(data.get("link"), dict):
        return data
    if not isinstance(data, dict) or not isinstance(data.get("content"), str):
        raise click.ClickException(f'line {number}: want an object with a "content" string')
    return data


def _memory(data: dict[str, Any], namespace: str | None, superseded: bool) -> dict[str, Any]:
    """The `POST /v1/memories` item of a memory line; a memory a link of the file supersedes is
    stored without its end of validity, which the link sets again."""
    memory = {k: data[k] for k in FIELDS if data.get(k) is not None}
    if superseded:
        memory.pop("valid_to", None)
    if namespace:
        memory["namespace"] = namespace
    return memory


@dataclass
class Imported:
    """What an import did: memories stored and found already present, links made, and the links
    it skipped, each with why."""

    stored: int = 0
    duplicates: int = 0
    linked: int = 0
    skipped: list[str] = field(default_factory=list)


@dataclass
class _Pending:
    """The file's links and the ids its memories were stored under, as the import reads them."""

    links: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    ids: dict[int, int] = field(default_factory=dict)
    """The file's memory id -> the id the import stored it under (or found it already stored as)."""
    ended: dict[int, str] = field(default_factory=dict)
    """The file's memory id -> the `valid_to` held back because a link of the file supersedes it."""
    targets: set[Any] = field(default_factory=set)
    """The file's ids of the memories its `supersedes` links end."""

    def add_link(self, number: int, link: dict[str, Any]) -> None:
        self.links.append((number, link))
        if link.get("kind") == "supersedes":
            self.targets.add(link.get("target"))


def import_memories(api: Api, file: IO[bytes], namespace: str | None, batch_size: int) -> Imported:
    """Store every memory line of `file` in batches, then make its links; safe to rerun."""
    done = Imported()
    pending = _Pending()
    size = _size(file)

    def flush(batch: list[tuple[Any, dict[str, Any]]], first_line: int) -> None:
        try:
            results = api.json("POST", "/v1/memories", json=[memory for _, memory in batch])["results"]
        except click.ClickException as exc:
            raise click.ClickException(
                f"lines from {first_line}: {exc.message} (stored so far: {done.stored}; rerunning is safe)"
            ) from exc
        for (file_id, _), result in zip(batch, results, strict=True):
            if isinstance(file_id, int):
                pending.ids[file_id] = result["id"]
        done.duplicates += sum(r["duplicate"] for r in results)
        done.stored += sum(not r["duplicate"] for r in results)

    with _bytes_progress(size) as progress:
        task = progress.add_task("importing", total=size)
        batch: list[tuple[Any, dict[str, Any]]] = []
        first = 0
        for number, line in _lines(file):
            progress.advance(task, len(line))
            data = _record(number, line)
            if "link" in data:
                pending.add_link(number, data["link"])
                continue
            if not batch:
                first = number
            superseded = data.get("id") in pending.targets
            if superseded and isinstance(data.get("valid_to"), str):
                pending.ended[data["id"]] = data["valid_to"]
            batch.append((data.get("id"), _memory(data, namespace, superseded)))
            if len(batch) == batch_size:
                flush(batch, first)
                batch = []
        if batch:
            flush(batch, first)
    _make_links(api, pending, done)
    return done


def _make_links(api: Api, pending: _Pending, done: Imported) -> None:
    """Each link of the file between the memories it stored; the rest reported. A memory whose end
    of validity was held back for a link that could not be made gets it back as it was."""
    ended_by_link: set[int] = set()
    for number, link in pending.links:
        kind, source, target = link.get("kind"), link.get("source"), link.get("target")
        said = f"line {number}: link {source} {kind} {target}"
        if not isinstance(source, int) or source not in pending.ids:
            done.skipped.append(f"{said}: memory {source} is not in the import")
            continue
        if not isinstance(target, int) or target not in pending.ids:
            done.skipped.append(f"{said}: memory {target} is not in the import")
            continue
        body = {"kind": kind, "target": pending.ids[target]}
        try:
            api.send("POST", f"/v1/memories/{pending.ids[source]}/links", json=body)
        except RequestFailed as exc:
            if exc.status is None or exc.status >= 500:
                raise
            done.skipped.append(f"{said}: {exc.message}")
            continue
        done.linked += 1
        if kind == "supersedes":
            ended_by_link.add(target)
    for file_id, valid_to in pending.ended.items():
        if file_id in ended_by_link:
            continue
        try:
            api.send("PATCH", f"/v1/memories/{pending.ids[file_id]}", json={"valid_to": valid_to})
        except RequestFailed as exc:
            if exc.status is None or exc.status >= 500:
                raise
            done.skipped.append(f"the valid_to of memory {file_id}: {exc.message}")


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
