"""`memoria bench report`: a bench's JSON report rendered as a dated Markdown page for docs/benchmarks.

The pages are generated, never edited: figures in prose go stale silently, a page rendered from the
JSON a run wrote says exactly what was measured, when, on which commit and machine. One renderer for
every bench (latency, quality, ingest, capture, secrets, soak, MCP, inference, hook), so it reads the
report's shape rather than knowing each bench:

- the provenance section first (command, commit, date, machine, load before and after);
- `targets` (the checks a bench passes or fails), when the report has them;
- the top-level numbers and words in one table of figures;
- each other section as a table: a mapping of records (`{"lexical": {"p50_ms": …}}`) becomes one row
  per record and part (nested mappings name the part: `overall`, `by_stratum.multi-hop`), one
  column per figure; a list of records one row per record; anything else the dotted names of its
  figures beside their values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoria_bench.provenance import PROVENANCE

#: A record table wider than this is split into one table per record instead.
MAX_COLUMNS = 14
#: Rows shown of a list of records (e.g. every miss of the secrets bench); the rest are counted.
MAX_ROWS = 100
_DEEPEST_HEADING = 6
#: A text longer than this (a latency report's query plans) stays in the JSON the page links: the
#: page is for reading, the JSON keeps every detail.
MAX_TEXT = 300


class ReportError(ValueError):
    """A JSON file that is not a bench report this renderer can date and name."""


@dataclass(frozen=True, slots=True)
class Page:
    """A rendered report: its file name (dated) and its Markdown."""

    name: str
    markdown: str


def render_page(report: Mapping[str, Any], source: str) -> Page:
    """The dated page of `report`; it links `source`, the JSON it was rendered from."""
    origin = _origin(report, source)
    bench = str(origin["bench"])
    label = origin.get("label")
    day = str(origin["started_utc"])[:10]
    title = f"memoria bench {bench}" + (f" ({label})" if label else "") + f", {day}"
    lines = [
        f"# {title}",
        "",
        f"Rendered by `memoria bench report` from [{source}]({source}), the JSON the run wrote; not "
        "edited by hand.",
        "",
    ]
    lines += _provenance(origin)
    figures = {key: value for key, value in report.items() if key != PROVENANCE}
    targets = figures.pop("targets", None)
    if isinstance(targets, list) and targets:
        lines += ["## Targets", "", *_records_table(targets), ""]
    scalars = {key: value for key, value in figures.items() if _is_leaf(value)}
    if scalars:
        lines += ["## Figures", "", *_pairs_table(scalars.items()), ""]
    for key, value in figures.items():
        if key not in scalars:
            lines += _section(key, value, level=2)
    return Page(name=f"{page_stem(report, source)}.md", markdown="\n".join(lines).rstrip() + "\n")


def page_stem(report: Mapping[str, Any], source: str) -> str:
    """`<day>-<bench>[-<label>]`: the name of the page (and of the JSON copied beside it)."""
    origin = _origin(report, source)
    parts = (str(origin["started_utc"])[:10], origin["bench"], origin.get("label"))
    return "-".join(_slug(part) for part in parts if part)


def _origin(report: Mapping[str, Any], source: str) -> Mapping[str, Any]:
    origin = report.get(PROVENANCE)
    if not isinstance(origin, Mapping) or not origin.get("bench") or not origin.get("started_utc"):
        raise ReportError(
            f"{source} has no provenance (bench, date): it predates dated reports, run the bench again"
        )
    return origin


def render_file(path: Path, out_dir: Path) -> Path:
    """Render the JSON report at `path` into `out_dir` (created), with a copy of the JSON beside it
    under the page's name; the page's path. A page of the same name (same bench, label and day) is
    replaced: re-rendering a report gives the same page."""
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: {exc}") from exc
    if isinstance(report, list):  # `memoria bench hook --json` before it carried provenance
        raise ReportError(
            f"{path} has no provenance (bench, date): it predates dated reports, run the bench again"
        )
    stem = page_stem(report, str(path))
    page = render_page(report, f"{stem}.json")
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{stem}.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    target = out_dir / page.name
    target.write_text(page.markdown, encoding="utf-8")
    return target


def _provenance(origin: Mapping[str, Any]) -> list[str]:
    machine = origin.get("machine") or {}
    rows = [
        ("command", _code(origin.get("command"))),
        ("commit", _code(origin.get("commit"))),
        ("started (UTC)", origin.get("started_utc")),
        ("finished (UTC)", origin.get("finished_utc")),
        ("CPUs", machine.get("cpus")),
        ("memory (GiB)", machine.get("memory_gib")),
        ("load average before (1, 5, 15 min)", machine.get("load_before")),
        ("load average after (1, 5, 15 min)", machine.get("load_after")),
        ("Python", machine.get("python")),
        ("platform", machine.get("platform")),
    ]
    return ["## Provenance", "", *_pairs_table(rows, header=("", "")), ""]


def _section(key: str, value: Any, level: int) -> list[str]:
    heading = "#" * min(level, _DEEPEST_HEADING) + f" {key}"
    if isinstance(value, list):
        return [heading, "", *_records_table(value), ""]
    if not isinstance(value, Mapping) or not value:
        return [heading, "", _cell(value), ""]
    if all(isinstance(record, Mapping) for record in value.values()):
        table = _pivot(value)
        if table is not None:
            return [heading, "", *table, ""]
        lines = [heading, ""]
        for name, record in value.items():
            lines += _section(str(name), record, level + 1)
        return lines
    flat = _flatten(value)
    if len(flat) <= MAX_ROWS:
        return [heading, "", *_pairs_table(flat.items()), ""]
    leaves = {name: item for name, item in value.items() if _is_leaf(item)}
    lines = [heading, "", *(_pairs_table(leaves.items()) if leaves else []), ""]
    for name, item in value.items():
        if name not in leaves:
            lines += _section(str(name), item, level + 1)
    return lines


def _pivot(records: Mapping[str, Any]) -> list[str] | None:
    """One row per record and part, one column per figure; None when the figures are too many."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    columns: dict[str, None] = {}
    for name, record in records.items():
        for path, value in _flatten(record).items():
            part, _, figure = path.rpartition(".")
            rows.setdefault((str(name), part), {})[figure] = value
            columns.setdefault(figure)
    if len(columns) > MAX_COLUMNS:
        return None
    with_parts = any(part for _, part in rows)
    header = ["", *(["part"] if with_parts else []), *columns]
    body = [
        [name, *([part] if with_parts else []), *(_cell(figures.get(column)) for column in columns)]
        for (name, part), figures in rows.items()
    ]
    return _table(header, body)


def _records_table(items: Sequence[Any]) -> list[str]:
    """A list: one row per record (its figures flattened), or its values on one line."""
    if not all(isinstance(item, Mapping) for item in items):
        return [_cell(list(items))]
    flat = [_flatten(item) for item in items[:MAX_ROWS]]
    columns = list(dict.fromkeys(column for row in flat for column in row))
    lines = _table(columns, [[_cell(row.get(column)) for column in columns] for row in flat])
    if len(items) > MAX_ROWS:
        lines += ["", f"({len(items) - MAX_ROWS} more rows in the JSON report.)"]
    return lines


def _pairs_table(
    pairs: Iterable[tuple[str, Any]], header: tuple[str, str] = ("figure", "value")
) -> list[str]:
    return _table(list(header), [[name, _cell(value)] for name, value in pairs])


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(_escape(cell) for cell in cells) + " |"

    return [line(header), "|" + "|".join("---" for _ in header) + "|", *(line(row) for row in rows)]


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Figures by dotted name: `{"a": {"b": 1}}` is `{"a.b": 1}`; a list of numbers stays one figure."""
    if isinstance(value, Mapping):
        flat: dict[str, Any] = {}
        for key, item in value.items():
            flat.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return flat
    if isinstance(value, list) and value and not all(_is_leaf(item) for item in value):
        flat = {}
        for index, item in enumerate(value):
            flat.update(_flatten(item, f"{prefix}[{index}]"))
        return flat
    return {prefix: value}


def _is_leaf(value: Any) -> bool:
    """A figure shown in one cell: a number, a word, or a list of them."""
    if isinstance(value, list):
        return all(not isinstance(item, Mapping | list) for item in value)
    return not isinstance(value, Mapping)


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value != 0 and abs(value) < 0.001:
            return f"{value:.2e}"
        return f"{round(value, 4):g}" if abs(value) < 1e6 else f"{value:.0f}"
    if isinstance(value, list):
        return ", ".join(_cell(item) for item in value) if value else "none"
    text = str(value)
    if len(text) > MAX_TEXT:
        return f"{len(text):,} characters, in the JSON report"
    return text


def _code(value: Any) -> str:
    return f"`{value}`" if value else "—"


def _escape(cell: str) -> str:
    return cell.replace("|", "\\|").replace("\n", " ")


def _slug(text: Any) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", str(text).lower()).strip("-")
