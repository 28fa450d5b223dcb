"""Gauges read when `/metrics` is scraped, never on a request path: the connection pools' usage
and the job queue (one small query, bounded by a timeout)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import asyncpg
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from app.db import Database

log = logging.getLogger(__name__)

JOB_STATES = ("queued", "running", "failed")
JOB_STATS_TIMEOUT_S = 1.0

# One scan of `jobs` (failed jobs stay as a record, the rest are in flight), grouped by kind and
# state. `oldest_due_s`: how long the oldest job that is due has waited for a worker.
JOB_STATS_SQL = """
SELECT kind, state,
       count(*) AS jobs,
       count(*) FILTER (WHERE state = 'queued' AND run_after <= now()) AS due,
       count(*) FILTER (WHERE state = 'queued' AND attempts > 0) AS retrying,
       extract(epoch FROM now() - min(created_at))::float8 AS oldest_s,
       extract(epoch FROM now() - min(run_after) FILTER (WHERE state = 'queued' AND run_after <= now()))
           ::float8 AS oldest_due_s
FROM jobs
GROUP BY kind, state
"""


class PoolCollector:
    """`memoria_db_pool_connections{pool, state}` and `memoria_db_pool_max_connections{pool}`, read
    from asyncpg's own counters at scrape time (`pool` is `write`, and `read` when recall has its
    own read URL)."""

    def __init__(self, db: Database) -> None:
        self._pools = [("write", db.write)] + (
            [("read", db.replica.replica)] if db.replica is not None else []
        )
        self._replica = db.replica

    def collect(self) -> Iterator[Metric]:
        connections = GaugeMetricFamily(
            "memoria_db_pool_connections",
            "Open pool connections: `in_use` (acquired) or `idle`",
            labels=["pool", "state"],
        )
        ceiling = GaugeMetricFamily(
            "memoria_db_pool_max_connections", "Most connections the pool opens", labels=["pool"]
        )
        for name, pool in self._pools:
            size, idle = pool.get_size(), pool.get_idle_size()
            connections.add_metric([name, "in_use"], size - idle)
            connections.add_metric([name, "idle"], idle)
            ceiling.add_metric([name], pool.get_max_size())
        yield connections
        yield ceiling
        if self._replica is not None:
            yield from self._replica_metrics()

    def _replica_metrics(self) -> Iterator[Metric]:
        """The read replica as the router sees it (`app.db.replica`)."""
        router = self._replica
        assert router is not None
        details = router.details()
        lag = GaugeMetricFamily(
            "memoria_db_replica_lag_seconds",
            "Age of the oldest primary WAL position the replica has not replayed (NaN: unreachable)",
        )
        lag.add_metric([], float("nan") if router.lag_s is None else router.lag_s)
        serving = GaugeMetricFamily(
            "memoria_db_replica_serving_reads",
            "1 when reads may go to the replica (healthy, within the lag bound)",
        )
        serving.add_metric([], 1.0 if details["serving_reads"] else 0.0)
        reads = CounterMetricFamily(
            "memoria_db_reads", "Read-pool acquisitions by where they went", labels=["target"]
        )
        for target, count in router.reads.items():
            reads.add_metric([target], count)
        fallbacks = CounterMetricFamily(
            "memoria_db_replica_failures", "Times the replica failed and reads were routed around it"
        )
        fallbacks.add_metric([], router.fallbacks)
        yield from (lag, serving, reads, fallbacks)


@dataclass(frozen=True, slots=True)
class JobStats:
    rows: Sequence[asyncpg.Record]
    seconds: float


class JobQueueCollector:
    """The job queue as of the last `refresh()` (the scrape runs it first): jobs per kind and state,
    due and retrying jobs, the age of the oldest job, and whether the read worked. Kinds the worker
    handles are reported with zeros when they have no jobs, so a dashboard sees 0, not nothing."""

    def __init__(
        self, pool: asyncpg.Pool, kinds: Callable[[], Sequence[str]], timeout_s: float = JOB_STATS_TIMEOUT_S
    ) -> None:
        self._pool = pool
        self._kinds = kinds
        self._timeout_s = timeout_s
        self._stats: JobStats | None = None
        self._failed = False

    async def refresh(self) -> None:
        started = time.perf_counter()
        try:
            rows = await asyncio.wait_for(self._pool.fetch(JOB_STATS_SQL), self._timeout_s)
        except Exception:  # TimeoutError too: the scrape reports the failure, it never fails
            # once per outage at WARNING: Prometheus scrapes every few seconds
            level = logging.DEBUG if self._failed else logging.WARNING
            log.log(level, "reading the job queue for /metrics failed", exc_info=True)
            self._stats, self._failed = None, True
            return
        self._failed = False
        self._stats = JobStats(rows, time.perf_counter() - started)

    def collect(self) -> Iterator[Metric]:
        stats = self._stats
        up = GaugeMetricFamily(
            "memoria_jobs_stats_up",
            f"1 when this scrape read the job queue (within {self._timeout_s:g} s); 0: no job gauges",
        )
        up.add_metric([], 1 if stats is not None else 0)
        yield up
        if stats is None:
            return
        seconds = GaugeMetricFamily(
            "memoria_jobs_stats_duration_seconds", "How long this scrape's job-queue query took"
        )
        seconds.add_metric([], stats.seconds)
        yield seconds
        jobs = GaugeMetricFamily(
            "memoria_jobs",
            "Jobs by kind and state (`failed`: out of attempts, kept as a record with its last error)",
            labels=["kind", "state"],
        )
        due = GaugeMetricFamily("memoria_jobs_due", "Queued jobs whose time has come", labels=["kind"])
        retrying = GaugeMetricFamily(
            "memoria_jobs_retrying",
            "Queued jobs that failed before and wait for another run",
            labels=["kind"],
        )
        oldest = GaugeMetricFamily(
            "memoria_jobs_oldest_age_seconds",
            "Age of the oldest job of a kind and state (since it was enqueued)",
            labels=["kind", "state"],
        )
        oldest_due = GaugeMetricFamily(
            "memoria_jobs_oldest_due_age_seconds",
            "How long the oldest due job has waited for a worker (0: none due)",
            labels=["kind"],
        )
        counts = {(row["kind"], row["state"]): row for row in stats.rows}
        for kind in sorted({kind for kind, _ in counts} | set(self._kinds())):
            due_total = retrying_total = 0
            oldest_due_s = 0.0
            for state in JOB_STATES:  # all the table's CHECK allows
                row = counts.get((kind, state))
                jobs.add_metric([kind, state], row["jobs"] if row else 0)
                if row is None:
                    continue
                oldest.add_metric([kind, state], row["oldest_s"])
                due_total += row["due"]
                retrying_total += row["retrying"]
                oldest_due_s = max(oldest_due_s, row["oldest_due_s"] or 0.0)
            due.add_metric([kind], due_total)
            retrying.add_metric([kind], retrying_total)
            oldest_due.add_metric([kind], oldest_due_s)
        yield from (jobs, due, retrying, oldest, oldest_due)
