"""Rich tables for people; tab-separated lines when piped; plain JSON for scripts (`--json`).

Ids are what `forget ID` and `promote ID` take, so every table prints them whole: the id column never
wraps or shrinks, and the content column is the one that gives way to a narrow terminal.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text


def console() -> Console:
    """A fresh console per use, so the width follows COLUMNS and the stream is today's sys.stdout."""
    return Console(highlight=False)


def err_console() -> Console:
    return Console(stderr=True, highlight=False)


def print_json(data: Any) -> None:
    console().print_json(json.dumps(data), highlight=False)


def legs_of(explain: dict[str, Any] | None) -> str:
    """The legs that found a hit, from its `<leg>_rank` fields (works for legs added later too)."""
    if not explain:
        return ""
    return " ".join(
        f"{key.removesuffix('_rank')}:{value}"
        for key, value in explain.items()
        if key.endswith("_rank") and value is not None
    )


def _number(value: Any, digits: int = 4) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def version_marks(item: dict[str, Any]) -> str:
    """What a recalled or listed memory says about versions and fixes, before its text: it stands in
    for older versions (`replaces`), is itself superseded (shown when asked for), or is the fix
    that came along with a problem (`came_with`); empty for a plain memory."""
    marks = []
    if item.get("replaces"):
        marks.append("replaces " + ", ".join(f"#{old}" for old in item["replaces"]))
    if item.get("superseded_by") is not None:
        marks.append(f"superseded by #{item['superseded_by']}")
    if item.get("came_with") is not None:
        marks.append(f"resolves #{item['came_with']}")
    return f"({'; '.join(marks)}) " if marks else ""


def recall_table(result: dict[str, Any], explain: bool) -> Table:
    hits: list[dict[str, Any]] = result["results"]
    several = len({hit["namespace"] for hit in hits}) > 1
    table = Table(show_lines=False, pad_edge=False, expand=False)
    table.add_column("#", justify="right")
    table.add_column("score", justify="right")
    table.add_column("legs")
    if explain:
        table.add_column("lexical", justify="right")
        table.add_column("dense dist", justify="right")
        table.add_column("fused", justify="right")
    if several:
        table.add_column("namespace")
    table.add_column("id", justify="right", no_wrap=True)
    table.add_column("content", overflow="fold")
    for rank, hit in enumerate(hits, 1):
        why = hit.get("explain") or {}
        row = [str(rank), _number(hit["score"]), legs_of(why)]
        if explain:
            row += [
                _number(why.get("lexical_score")),
                _number(why.get("dense_distance")),
                _number(why.get("fused_score")),
            ]
        if several:
            row.append(hit["namespace"])
        category = f"[dim]\\[{hit['category']}][/dim] " if hit.get("category") else ""
        row += [str(hit["id"]), category + escape(version_marks(hit) + hit["content"])]
        table.add_row(*row)
    return table


def _when(item: dict[str, Any]) -> str:
    return str(item["created_at"])[:16].replace("T", " ")


def _one_line(content: str) -> str:
    return " ".join(content.split())


def memory_table(items: Sequence[dict[str, Any]]) -> Table:
    """One row per memory on one line where the terminal allows: id and date never shrink, the
    content is cut with an ellipsis first, then namespace, category and tags fold onto more lines."""
    table = Table(pad_edge=False)
    table.add_column("id", justify="right", no_wrap=True)
    table.add_column("namespace", overflow="fold")
    table.add_column("category", overflow="fold")
    table.add_column("tags", overflow="fold")
    table.add_column("created", no_wrap=True)
    table.add_column("content")
    for item in items:
        table.add_row(
            str(item["id"]),
            item["namespace"],
            item.get("category") or "",
            ",".join(item.get("tags") or []),
            _when(item),
            Text(version_marks(item) + _one_line(item["content"]), no_wrap=True, overflow="ellipsis"),
        )
    return table


def links_table(links: dict[str, Any]) -> Table:
    """A memory's links (`GET /v1/memories/{id}/links`), one a row, read as a sentence: "this
    supersedes #5", "#9 supersedes this"."""
    table = Table(pad_edge=False)
    table.add_column("link", no_wrap=True)
    table.add_column("id", justify="right", no_wrap=True)
    table.add_column("origin", no_wrap=True)
    table.add_column("linked", no_wrap=True)
    table.add_column("content")
    for link in links["links"]:
        other = link["memory"]
        said = f"this {link['kind']}" if link["direction"] == "out" else f"{link['kind']} this"
        origin = link["origin"] + (f": {link['reason']}" if link.get("reason") else "")
        table.add_row(
            said,
            str(other["id"]),
            origin,
            str(link["created_at"])[:16].replace("T", " "),
            Text(_one_line(other["content"]), no_wrap=True, overflow="ellipsis"),
        )
    return table


def memory_lines(items: Sequence[dict[str, Any]]) -> list[str]:
    """The table's columns tab-separated, one memory a line and nothing cut: what a pipe gets
    (`memoria list | cut -f1`), where no terminal width says how much room there is."""
    return [
        "\t".join(
            (
                str(item["id"]),
                item["namespace"],
                item.get("category") or "",
                ",".join(item.get("tags") or []),
                _when(item),
                version_marks(item) + _one_line(item["content"]),
            )
        )
        for item in items
    ]
