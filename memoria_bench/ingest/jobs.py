"""The durable jobs the stores enqueue, watched from the outside: when the queue is empty again (the
end of end-to-end ingest) and how long the worker pool spent on graph indexing.

A finished job is deleted in the transaction of its work, so the table keeps no run times. What it
does show, read every `poll_s`: the jobs waiting and running, and for every running batch its claim
time (`updated_at`, set by the claim, one timestamp per claimed batch). A batch that was running at
one read and is gone at the next finished in between; its run time is taken as the midpoint of
that window minus its claim time, so each figure is within half a poll of the truth, and the low and
high sums are kept beside it. A batch claimed and finished between two reads is never seen: the
coverage (jobs seen running / jobs the stores enqueued) says how much of the work the figure saw.

Reading the table is one small statement per poll on a connection of the benchmark's own (a few
thousand rows at most), cheap beside the work it watches.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg

from app.core.stats import latency_summary

# One consistent snapshot per read: the jobs of `kinds` by state, running ones by claim (a batch);
# one row with NULLs when there are none, so `at` always comes back.
JOBS_NOW = """
SELECT now() AS at, j.state, j.kind, j.claimed_at, j.jobs
FROM (VALUES (1)) AS one (x)
LEFT JOIN (
    SELECT state, kind, CASE WHEN state = 'running' THEN updated_at END AS claimed_at, count(*) AS jobs
    FROM jobs
    WHERE kind = ANY($1::text[])
    GROUP BY 1, 2, 3
) AS j ON true
"""

# Job ids are drawn from one identity sequence: its advance is every job enqueued meanwhile.
JOB_IDS_DRAWN = "SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence('jobs', 'id')::regclass), 0)"


@dataclass(frozen=True, slots=True)
class JobRow:
    state: str
    kind: str
    claimed_at: datetime | None  # running jobs only
    jobs: int


@dataclass(slots=True)
class Batch:
    """A claimed batch of one kind, seen running."""

    claimed_at: datetime
    jobs: int
    last_seen: datetime
    gone_at: datetime | None = None

    def run_s(self) -> tuple[float, float] | None:
        """(low, high) bounds of its run time; None while it is still running."""
        if self.gone_at is None:
            return None
        return (
            (self.last_seen - self.claimed_at).total_seconds(),
            (self.gone_at - self.claimed_at).total_seconds(),
        )


@dataclass(slots=True)
class Observation:
    """One read of the queue: `client_at` is `time.perf_counter()` when the read was sent."""

    client_at: float
    at: datetime
    queued: int
    running: int
    failed: int

    @property
    def pending(self) -> int:
        return self.queued + self.running


@dataclass(slots=True)
class JobWatch:
    """What the reads of the queue add up to; `observe` is fed one read at a time."""

    kinds: tuple[str, ...]
    timed_kind: str  # whose batches are timed (graph indexing)
    observations: list[Observation] = field(default_factory=list)
    batches: dict[datetime, Batch] = field(default_factory=dict)

    def observe(self, client_at: float, at: datetime, rows: Sequence[JobRow]) -> Observation:
        counts = {"queued": 0, "running": 0, "failed": 0}
        running: dict[datetime, int] = {}
        for row in rows:
            counts[row.state] = counts.get(row.state, 0) + row.jobs
            if row.state == "running" and row.kind == self.timed_kind and row.claimed_at is not None:
                running[row.claimed_at] = running.get(row.claimed_at, 0) + row.jobs
        for claimed_at, jobs in running.items():
            batch = self.batches.get(claimed_at)
            if batch is None:
                self.batches[claimed_at] = Batch(claimed_at, jobs, at)
            else:
                batch.jobs, batch.last_seen = max(batch.jobs, jobs), at
        for claimed_at, batch in self.batches.items():
            if batch.gone_at is None and claimed_at not in running:
                batch.gone_at = at
        observation = Observation(client_at, at, counts["queued"], counts["running"], counts["failed"])
        self.observations.append(observation)
        return observation

    def drained_after(self, client_at: float) -> Observation | None:
        """The first read sent after `client_at` that found nothing waiting or running."""
        return next((o for o in self.observations if o.client_at > client_at and not o.pending), None)

    def summary(self) -> dict[str, Any]:
        """The worker-side figures of the timed kind, and the queue's backlog."""
        finished = [(b.jobs, bounds) for b in self.batches.values() if (bounds := b.run_s()) is not None]
        low = sum(lo for _, (lo, _) in finished)
        high = sum(hi for _, (_, hi) in finished)
        middle = [(lo + hi) / 2 for _, (lo, hi) in finished]
        jobs_seen = sum(jobs for jobs, _ in finished)
        busy = sum(middle)
        intervals = [
            (b.client_at - a.client_at) * 1000.0
            for a, b in zip(self.observations, self.observations[1:], strict=False)
        ]
        last = self.observations[-1] if self.observations else None
        return {
            "polls": len(self.observations),
            "poll_interval_ms": latency_summary(intervals) if intervals else {"n": 0.0},
            "backlog_max": max((o.pending for o in self.observations), default=0),
            "left": {
                "queued": last.queued if last else 0,
                "running": last.running if last else 0,
                "failed": last.failed if last else 0,
            },
            "batches_seen": len(finished),
            "jobs_seen": jobs_seen,
            "jobs_per_batch": latency_summary([float(jobs) for jobs, _ in finished])
            if finished
            else {"n": 0.0},
            "batch_ms": latency_summary([s * 1000.0 for s in middle]) if middle else {"n": 0.0},
            "busy_s": round(busy, 3),
            "busy_s_bounds": [round(low, 3), round(high, 3)],
            "per_job_ms": round(busy * 1000.0 / jobs_seen, 3) if jobs_seen else None,
        }


async def read_queue(conn: asyncpg.Connection, watch: JobWatch) -> Observation:
    """One read of the queue into `watch`."""
    client_at = time.perf_counter()
    records = await conn.fetch(JOBS_NOW, list(watch.kinds))
    rows = [
        JobRow(r["state"], r["kind"], r["claimed_at"], int(r["jobs"]))
        for r in records
        if r["state"] is not None
    ]
    return watch.observe(client_at, records[0]["at"], rows)


async def watch_queue(conn: asyncpg.Connection, watch: JobWatch, poll_s: float, stop: asyncio.Event) -> None:
    """Read the queue every `poll_s` until `stop` is set."""
    while not stop.is_set():
        await read_queue(conn, watch)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), poll_s)


async def wait_drained(watch: JobWatch, after: float, timeout_s: float, poll_s: float) -> Observation | None:
    """The first read sent after `after` (perf_counter) that found the queue empty, waiting at most
    `timeout_s` for it (the watcher keeps reading meanwhile); None when it never came."""
    deadline = time.perf_counter() + timeout_s
    while time.perf_counter() < deadline:
        drained = watch.drained_after(after)
        if drained is not None:
            return drained
        await asyncio.sleep(poll_s / 2)
    return watch.drained_after(after)


async def job_ids_drawn(conn: asyncpg.Connection) -> int:
    return int(await conn.fetchval(JOB_IDS_DRAWN))
