"""The latency report as tables: latency per path, scope, concurrency and mode; ratios to
lexical-only; HNSW recall@10; the targets; and the EXPLAIN profile per CTE."""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console
from rich.table import Table

from app.recall.sql import RECALL_STATEMENT
from memoria_bench.latency.hnsw import TIE_EPSILON
from memoria_bench.latency.http import SPLIT_COLUMNS

# `name AS (`, `name (columns) AS MATERIALIZED (` …: the CTEs the recall statement defines
_CTE = re.compile(r"^(\w+)(?: \([^)]*\))? AS (?:NOT )?(?:MATERIALIZED )?\(", flags=re.MULTILINE)


def print_report(report: dict[str, Any], console: Console, show_plans: bool = False) -> None:
    """Every table of `report`; with `show_plans`, the slowest statement's plan per scope and mode."""
    if not console.is_terminal:
        console.width = max(console.width, 180)  # a log file has no width; keep rows on one line
    console.print(_latency_table(report))
    split = _split_table(report)
    if split is not None:
        console.print(split)
    console.print(_ratios_table(report["ratios"]))
    console.print(_hnsw_table(report["hnsw"], _ef_search(report["settings"])))
    console.print(_targets_table(report["targets"]))
    console.print(plans_table(report["explain"]))
    if show_plans:
        for name, e in report["explain"].items():
            worst = e["slowest"]
            console.rule(f"{name}, slowest: {worst['query']} ({worst['timed_ms']} ms when timed)")
            console.print(worst["text"], markup=False, highlight=False)


def _load_line(report: dict[str, Any]) -> str:
    """What loading took now (0 s when the data directory held the corpus already) and the sizes."""
    load, sizes = report.get("load", {}), report["corpus"].get("sizes", {})
    way = (
        "COPY, indexes built after"
        if load.get("indexes_rebuilt")
        else "COPY"
        if load.get("bulk")
        else "store path"
    )
    mb = {name: (sizes.get(name) or 0) / 2**20 for name in ("table_bytes", "hnsw_bytes", "text_index_bytes")}
    return (
        f"loaded now: {load.get('stored_now', 0):,} memories in {load.get('seconds', 0.0):,.0f} s ({way}); "
        f"table {mb['table_bytes']:,.0f} MB, HNSW {mb['hnsw_bytes']:,.0f} MB, "
        f"text index {mb['text_index_bytes']:,.0f} MB"
    )


def _latency_table(report: dict[str, Any]) -> Table:
    recall = report["settings"]
    machine = report["machine"]
    scopes = ", ".join(
        f"{s['label']} = {s['namespace'] or str(s.get('namespaces', '')) + ' namespaces'} ({s['rows']:,})"
        for s in report["scopes"]
    )
    table = Table(
        title=f"recall latency, ms — {report['corpus']['table_rows']:,} memories; scopes: {scopes}",
        caption=(
            f"ef_search {_ef_search(recall)}, iterative_scan {recall['iterative_scan']}, leg_depth "
            f"{recall['leg_depth']}, limit 10; load average {machine['loadavg_start'][0]:.2f} → "
            f"{machine['loadavg_end'][0]:.2f} on {machine['cpus']} CPUs; shared_buffers "
            f"{machine.get('shared_buffers', '?')}\n{_load_line(report)}"
        ),
    )
    for column in ("path", "scope", "conc.", "mode", "n", "p50", "p95", "p99", "mean", "req/s"):
        table.add_column(column, justify="left" if column in ("path", "scope", "mode") else "right")
    for r in report["latency"]:
        table.add_row(
            r["path"], r["scope"], str(r["concurrency"]), r["mode"], f"{r['n']:.0f}",
            f"{r['p50']:.1f}", f"{r['p95']:.1f}", f"{r['p99']:.1f}", f"{r['mean']:.1f}",
            f"{r['per_second']:.0f}" if "per_second" in r else "",
        )  # fmt: skip
    return table


def _split_table(report: dict[str, Any]) -> Table | None:
    """Where an HTTP request's time went, per mode: the median of each phase the server recorded
    (its Server-Timing header); None when the server sent none."""
    rows = [r for r in report["latency"] if r["path"] == "http" and r.get("split")]
    if not rows:
        return None
    table = Table(
        title="where an HTTP recall's time goes, median ms per phase (Server-Timing)",
        caption="embed runs beside begin and scope; only embed-wait of it is on the request's path. "
        "other: the rest inside the app (routing, decoding, serialization); "
        "outside: network, HTTP server, client; rest: all the client waited for but sql and embed-wait",
    )
    for column in ("scope", "conc.", "mode", *SPLIT_COLUMNS):
        table.add_column(column, justify="left" if column in ("scope", "mode") else "right")
    for r in rows:
        split = r["split"]
        cells = [f"{split[column]:.1f}" for column in SPLIT_COLUMNS]
        table.add_row(r["scope"], str(r["concurrency"]), r["mode"], *cells)
    return table


def _ratios_table(ratios: list[dict[str, Any]]) -> Table:
    table = Table(title="fused / lexical (same queries, same run)")
    for column in ("path", "scope", "conc.", "mode", "p50", "p95"):
        table.add_column(column, justify="left" if column in ("path", "scope", "mode") else "right")
    for r in ratios:
        table.add_row(
            r["path"], r["scope"], str(r["concurrency"]), r["mode"], f"{r['p50']:.2f}", f"{r['p95']:.2f}"
        )
    return table


def _ef_search(recall: dict[str, Any]) -> int:
    """The candidate list the service walked this table with (a report of older code has only the
    configured one)."""
    used: int = recall.get("ef_search_used", recall["ef_search"])
    return used


def _hnsw_table(hnsw: list[dict[str, Any]], ef_search: int) -> Table:
    table = Table(title=f"HNSW recall@10 of the dense leg vs exact search (ef_search {ef_search})")
    columns = ("scope", "namespace", "rows", "queries", "recall@10", "95% CI", "min", "queries < 1",
               "within tie", "95% CI ")  # fmt: skip
    for column in columns:
        table.add_column(column, justify="left" if column in ("scope", "namespace") else "right")
    for h in hnsw:
        low, high = h["ci95"]
        tie = h["within_tie"]
        tie_low, tie_high = tie["ci95"]
        table.add_row(
            h["scope"], h["namespace"], f"{h['rows']:,}", f"{h['queries']:.0f}",
            f"{h['recall@10']:.4f}", f"[{low:.3f}, {high:.3f}]", f"{h['min']:.2f}", f"{h['below_1']:.0f}",
            f"{tie['recall@10']:.4f}", f"[{tie_low:.3f}, {tie_high:.3f}]",
        )  # fmt: skip
    table.caption = (
        "recall@10: the exact ten ids found (the target's measure); within tie: hits no farther than "
        f"the exact tenth + {TIE_EPSILON:g} in cosine distance (near twins are equally right)"
    )
    worst = [(h["scope"], q) for h in hnsw for q in h["worst"]]
    if worst:
        table.caption += "; lowest: " + "; ".join(
            f"{scope} {q['recall@10']:.1f}/{q['within_tie']:.1f} {q['query']!r}" for scope, q in worst[:3]
        )
    return table


def _targets_table(targets: list[dict[str, Any]]) -> Table:
    table = Table(title="targets (reported, not asserted)")
    for column in ("target", "value", "goal", "met"):
        table.add_column(column, justify="left" if column in ("target", "goal") else "right")
    for t in targets:
        table.add_row(t["target"], f"{t['value']:g}", t["goal"], "yes" if t["met"] else "[red]no[/red]")
    return table


def plans_table(explains: dict[str, Any]) -> Table:
    """One row per scope and mode, one column per CTE that took time (median ms), and the indexes
    the lexical and dense legs used."""
    ctes = set(_CTE.findall(RECALL_STATEMENT))
    parts = [
        p
        for p in dict.fromkeys(p for e in explains.values() for p in e["parts_ms_p50"])
        if (p.startswith("CTE ") or p.removeprefix("inlined ") in ctes)
        and any(e["parts_ms_p50"].get(p, 0.0) >= 0.05 for e in explains.values())
    ]
    n = max((e["statements"] for e in explains.values()), default=0)
    table = Table(
        title=f"EXPLAIN ANALYZE, median ms of {n} statements per scope and mode, per CTE",
        caption="* inlined by the planner. A CTE's time includes the CTEs it reads. "
        "Indexes: memories_<name>_idx.",
    )
    headers = [
        p.removeprefix("CTE ") if p.startswith("CTE ") else p.removeprefix("inlined ") + "*" for p in parts
    ]
    for column in ("statement", "total", *headers, "slowest", "lexical index", "dense index"):
        table.add_column(
            column, justify="left" if column in ("statement", "lexical index", "dense index") else "right"
        )
    for name, e in explains.items():

        def short(cte: str, e: dict[str, Any] = e) -> str:
            names = e["indexes"].get(f"CTE {cte}", [])
            return ",".join(n.removeprefix("memories_").removesuffix("_idx") for n in names) or "-"

        table.add_row(
            name,
            f"{e['execution_ms_p50']:.1f}",
            *(f"{e['parts_ms_p50'][p]:.1f}" if p in e["parts_ms_p50"] else "" for p in parts),
            f"{e['slowest']['execution_ms']:.1f}",
            short("lexical_strict"),
            short("dense_ann"),
        )
    return table
