"""The ingest report as tables: the two rates, where a store's time goes (and the worker's), the
queue, and the issue's targets."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from memoria_bench.ingest.split import SPLIT_COLUMNS


def _num(value: Any, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def print_report(report: dict[str, Any], console: Console) -> None:
    console.print(_rates_table(report))
    split = _split_table(report)
    if split is not None:
        console.print(split)
    jobs, stored = report["jobs"], report["stored"]
    console.print(
        f"jobs: {jobs['enqueued']} enqueued, drained: {jobs['drained']}, left {jobs['left']}; "
        f"graph indexing seen running: {jobs['jobs_seen']} jobs in {jobs['batches_seen']} batches "
        f"(coverage {_num(jobs['coverage'], 3)}, poll {report['options']['poll_ms']} ms, median "
        f"{_num(jobs['poll_interval_ms'].get('p50'))} ms), busy {jobs['busy_s']} s (bounds "
        f"{jobs['busy_s_bounds']}), {_num(jobs['busy_s_estimated_all'], 2)} s estimated for every job, "
        f"worker utilisation {_num(jobs.get('worker_utilisation'), 2)}; "
        f"backlog max {jobs['backlog_max']}, at the last answer {jobs['backlog_at_last_answer']}"
    )
    console.print(
        f"stored: {stored.get('memories')} memories, {stored.get('embedded')} embedded, "
        f"{stored.get('with_concepts')} with concepts; {stored.get('concepts')} concepts, "
        f"{stored.get('edges')} edges; embedded by {stored.get('embedding_models')}"
    )
    requests = report["requests"]
    if requests["errors"]:
        console.print(
            f"[red]{requests['errors']} failed requests[/red] {requests['statuses']}: "
            f"{requests['first_error']}"
        )
    for target in report["targets"]:
        console.print(f"{'met' if target['met'] else 'MISSED'}: {target['target']}")


def _rates_table(report: dict[str, Any]) -> Table:
    options, served, machine = report["options"], report["served"], report["machine"]
    memories, rates, latency = report["memories"], report["throughput"], report["requests"]["latency_ms"]
    settings = ", ".join(f"{name} {value}" for name, value in served.items())
    table = Table(
        title=f"memoria bench ingest: {memories['accepted']:,} of {memories['sent']:,} memories accepted, "
        f"batches of {options['batch']}, {options['concurrency']} in flight, "
        f"{options['namespaces']} namespace(s)",
        caption=f"{settings}; load average {machine['loadavg_start'][0]:.2f} → "
        f"{machine['loadavg_end'][0]:.2f} on {machine['cpus']} CPUs",
    )
    for column in ("measure", "seconds", "memories/s", "note"):
        table.add_column(column, justify="left" if column in ("measure", "note") else "right")
    table.add_row(
        "accepted over HTTP",
        _num(rates["http_s"], 2),
        _num(rates["accepted_per_s"]),
        f"first request sent → last answer; batch p50 {_num(latency.get('p50'))} ms, "
        f"p95 {_num(latency.get('p95'))} ms",
    )
    table.add_row(
        "end to end (graph indexed)",
        _num(rates["end_to_end_s"], 2),
        _num(rates["end_to_end_per_s"]),
        "first request sent → every job the stores enqueued finished",
    )
    table.add_row("drain after the last answer", _num(rates["drain_tail_s"], 2), "", "the queue's tail alone")
    return table


def _split_table(report: dict[str, Any]) -> Table | None:
    split, jobs = report["split"], report["jobs"]
    if not split:
        return None
    table = Table(
        title="where the time goes, median per store request (Server-Timing) and per worker batch",
        caption="prepare: checks, redaction; lookup: namespaces, duplicates; sql: the INSERT "
        "transaction; other: decoding, validation, serialization; outside: network, HTTP server, "
        "client.\nWorker: a batch is one claim (graph lock wait included), a memory one job, its "
        "total estimated for every job. Totals overlap: requests in flight, the worker beside them.",
    )
    for column in ("phase", "ms / batch", "ms / memory", "total s", "share of app"):
        table.add_column(column, justify="left" if column == "phase" else "right")
    share = split["share_of_app"]
    for column in SPLIT_COLUMNS:
        table.add_row(
            column,
            _num(split["per_batch_ms"][column], 1),
            _num(split["per_memory_ms"][column], 2),
            _num(split["total_s"][column], 2),
            f"{share[column]:.0%}" if share.get(column) is not None else "",
            end_section=column == SPLIT_COLUMNS[-1],
        )
    batch_ms = jobs["batch_ms"]
    table.add_row(
        "graph indexing (worker)",
        _num(batch_ms.get("p50"), 1),
        _num(jobs["per_job_ms"], 2),
        _num(jobs["busy_s_estimated_all"], 2),
        "",
    )
    return table
