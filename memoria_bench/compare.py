"""`memoria bench compare`: paired CIs between two `bench quality --per-query` files.

Some changes cannot be two systems of one run: another embedder or another embedding input means
storing the corpus again. Each such run writes its per-query metrics; this pairs them query by query
(the same queries, in any order) and gives the bootstrap CI of each metric's mean difference,
overall and per stratum, exactly as one run does for its own systems.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from memoria_bench.modes import ALL
from memoria_bench.provenance import PROVENANCE
from memoria_bench.quality import CI_METRICS, paired_bootstrap_ci


class CompareError(ValueError):
    """Two per-query files that cannot be paired (other queries, an unknown system or metric)."""


def read_per_query(path: Path) -> dict[str, Any]:
    """A `--per-query` file, checked for the keys the pairing needs."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CompareError(f"{path}: not a readable per-query file ({exc})") from exc
    if not isinstance(data, dict) or not {"queries", "systems", "metrics"} <= data.keys():
        raise CompareError(f"{path}: not a per-query file of `memoria bench quality --per-query`")
    return data


def _rows(data: Mapping[str, Any], system: str, label: str) -> dict[str, dict[str, float]]:
    """Query id -> {metric: value} of one system of one file."""
    if system not in data["systems"]:
        raise CompareError(f"{label} has no system {system!r} (it has {', '.join(data['systems'])})")
    metrics = data["metrics"]
    missing = [m for m in CI_METRICS if m not in metrics]
    if missing:
        raise CompareError(f"{label} lacks {', '.join(missing)}")
    return {
        q["query_id"]: dict(zip(metrics, values, strict=True))
        for q, values in zip(data["queries"], data["systems"][system], strict=True)
    }


def compare(
    after: Mapping[str, Any], before: Mapping[str, Any], system_after: str = ALL, system_before: str = ALL
) -> dict[str, Any]:
    """Means of both and the paired CI of after - before for every `CI_METRICS` metric, overall and
    per stratum; the files must hold the same queries."""
    a, b = _rows(after, system_after, "after"), _rows(before, system_before, "before")
    if a.keys() != b.keys():
        raise CompareError(
            f"the files hold other queries ({len(a.keys() - b.keys())} only after, "
            f"{len(b.keys() - a.keys())} only before): compare runs of one corpus"
        )
    stratum = {q["query_id"]: q["stratum"] for q in after["queries"]}
    groups: dict[str, list[str]] = {"overall": sorted(a)}
    for query_id in sorted(a):
        groups.setdefault(stratum[query_id], []).append(query_id)

    def figures(ids: list[str]) -> dict[str, Any]:
        out: dict[str, Any] = {"queries": len(ids)}
        for metric in CI_METRICS:
            xs, ys = [a[i][metric] for i in ids], [b[i][metric] for i in ids]
            out[metric] = {
                "after": round(sum(xs) / len(xs), 4),
                "before": round(sum(ys) / len(ys), 4),
                "difference": round((sum(xs) - sum(ys)) / len(xs), 4),
                "ci": list(paired_bootstrap_ci(xs, ys)),
            }
        return out

    return {
        "after": system_after,
        "before": system_before,
        "runs": {"after": _origin(after), "before": _origin(before)},
        "figures": {group: figures(ids) for group, ids in groups.items()},
    }


def _origin(data: Mapping[str, Any]) -> dict[str, Any]:
    """Which run a per-query file came from: its commit, when and how it ran (files written before
    per-query files carried provenance say nothing, and show as unknown)."""
    origin = data.get(PROVENANCE) or {}
    return {key: origin.get(key) for key in ("commit", "started_utc", "command")}


def print_comparison(report: Mapping[str, Any], console: Console) -> None:
    table = Table(title=f"after ({report['after']}) - before ({report['before']}): paired bootstrap 95% CI")
    table.add_column("part")
    table.add_column("queries", justify="right")
    for metric in CI_METRICS:
        table.add_column(f"{metric} before → after", justify="right")
        table.add_column(f"{metric} CI", justify="right")
    for group, figures in report["figures"].items():
        cells = [group, str(figures["queries"])]
        for metric in CI_METRICS:
            f = figures[metric]
            cells += [f"{f['before']:.3f} → {f['after']:.3f}", f"[{f['ci'][0]:+.3f}, {f['ci'][1]:+.3f}]"]
        table.add_row(*cells)
    console.print(table)
    for side in ("before", "after"):
        run = report.get("runs", {}).get(side) or {}
        commit, started = run.get("commit") or "unknown", run.get("started_utc") or "unknown"
        console.print(f"{side}: commit {commit}, run {started}")
