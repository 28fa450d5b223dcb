"""The minute lines printed while the soak runs, and the summary with its targets."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console

from app.core.stats import latency_summary
from memoria_bench.soak.load import RECALL, STORE, Sample
from memoria_bench.soak.outage import ok

RSS_GROWTH_TARGET = 0.10


def minute_row(samples: Sequence[Sample], minute: int, rss_mb: float | None) -> dict[str, Any]:
    """p50/p95 (ms), requests and errors per operation for requests that ended in `minute`."""
    row: dict[str, Any] = {"minute": minute + 1, "rss_mb": rss_mb}
    for op in (STORE, RECALL):
        these = [s for s in samples if s.op == op and minute * 60 <= s.at_s < (minute + 1) * 60]
        good = [s.ms for s in these if ok(s)]
        summary = latency_summary(good) if good else {"n": 0.0}
        row[op] = {
            "n": len(these),
            "errors": len(these) - len(good),
            "p50": summary.get("p50"),
            "p95": summary.get("p95"),
        }
    return row


def minute_line(row: dict[str, Any]) -> str:
    parts = [f"minute {row['minute']:>3}"]
    for op in (STORE, RECALL):
        figures = row[op]
        parts.append(
            f"{op} n={figures['n']:>5} p50={_ms(figures['p50'])} p95={_ms(figures['p95'])} "
            f"errors={figures['errors']}"
        )
    rss = row["rss_mb"]
    parts.append(f"rss={rss:.0f} MB" if rss is not None else "rss=?")
    return " | ".join(parts)


def _ms(value: float | None) -> str:
    return f"{value:7.1f}" if value is not None else "      -"


def rss_growth(rss_mb: Sequence[tuple[float, float]], warmup_s: float) -> dict[str, float | None]:
    """Resident memory at the end of the warm-up and at the end, and the growth between them."""
    after = [mb for at_s, mb in rss_mb if at_s >= warmup_s]
    if len(after) < 2:
        return {"after_warmup_mb": None, "end_mb": None, "growth": None}
    start, end = after[0], after[-1]
    return {"after_warmup_mb": round(start, 1), "end_mb": round(end, 1), "growth": round(end / start - 1, 4)}


SHOWN_ERROR_LINES = 80  # of the server's ERROR lines and tracebacks; the JSON keeps them all


def targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The issue's bars: no lost write, RSS growth under 10 %, errors only inside an outage, and
    no 500 ever (an outage is answered 503, or not at all)."""
    checks = [
        {
            "target": "acknowledged stores all present",
            "value": report["lost_writes"],
            "met": report["lost_writes"] == 0,
        },
    ]
    growth = report["rss"]["growth"]
    checks.append(
        {"target": "server RSS growth after warm-up < 10%", "value": growth,
         "met": growth is not None and growth < RSS_GROWTH_TARGET}
    )  # fmt: skip
    if report.get("outage") is None:
        checks.append({"target": "0 errors", "value": report["errors"], "met": report["errors"] == 0})
    else:
        outage = report["outage"]
        checks.append(
            {"target": "errors only during the outage", "value": outage["errors_outside_outage"],
             "met": outage["errors_outside_outage"] == 0 and outage["recovery_s"] is not None}
        )  # fmt: skip
    statuses = report.get("error_statuses", {})
    server_errors = sum(n for status, n in statuses.items() if status.startswith("5") and status != "503")
    checks.append({"target": "no 5xx but 503", "value": server_errors, "met": server_errors == 0})
    return checks


def print_summary(report: dict[str, Any], console: Console) -> None:
    totals = report["totals"]
    console.print(
        f"soak: {report['duration_s']:.0f} s, {report['clients']} clients, {report['store_share']:.0%} "
        f"stores; corpus {report['corpus_start']} → {report['corpus_end']} memories"
    )
    for op in (STORE, RECALL):
        figures = totals[op]
        console.print(
            f"  {op}: n={figures['n']} ({figures.get('per_second', 0)}/s) p50={figures.get('p50')} ms "
            f"p95={figures.get('p95')} ms p99={figures.get('p99')} ms errors={figures['errors']}"
        )
    rss = report["rss"]
    console.print(
        f"  server RSS: {rss['after_warmup_mb']} MB after warm-up → {rss['end_mb']} MB at the end "
        f"(growth {rss['growth']:.1%})"
        if rss["growth"] is not None
        else "  server RSS: not measured"
    )
    if report.get("outage") is not None:
        outage = report["outage"]
        console.print(
            f"  PostgreSQL killed at {outage['kill_at_s']} s: recovered after {outage['recovery_s']} s "
            f"(store {outage['store_back_after_s']} s, recall {outage['recall_back_after_s']} s); "
            f"errors during the outage {outage['errors_during_outage']}, outside it "
            f"{outage['errors_outside_outage']}"
        )
    console.print(f"  failed requests by status (0: no answer): {report.get('error_statuses', {})}")
    for line in report.get("server_error_lines", [])[:SHOWN_ERROR_LINES]:
        console.print(f"  server: {line}", markup=False, highlight=False)
    console.print(f"  acknowledged stores: {report['acknowledged']}, lost: {report['lost_writes']}")
    for check in report["targets"]:
        mark = "met" if check["met"] else "NOT MET"
        console.print(f"  target {check['target']}: {check['value']} — {mark}")
