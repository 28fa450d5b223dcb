"""The bounded pool of job loops that runs in the app's lifespan.

`settings.workers` loops claim due jobs (`FOR UPDATE SKIP LOCKED`, so replicas share one queue),
run each kind's registered handler on the batch, delete finished jobs and record failures with an
exponential backoff. An enqueue in this process wakes an idle loop at once; otherwise loops poll,
so nothing depends on LISTEN/NOTIFY or session state (PgBouncer transaction mode is fine).

A loop never dies of an error: a database outage makes it back off and try again, a failing handler
fails only its jobs. A claimed job whose worker dies keeps its lease until `lease_s` passes and is
then handed out again; start-up reconciliation does the same and lets each kind repair what it
knows (`register(..., reconcile=...)`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence

import asyncpg

from app.core.metrics import JobMetrics
from app.jobs import sql
from app.jobs.queue import BatchFailed, Job, JobQueue, complete
from app.jobs.settings import JobSettings

log = logging.getLogger(__name__)

Handler = Callable[[Sequence[Job]], Awaitable[None]]
Reconciler = Callable[[asyncpg.Connection], Awaitable[None]]

RECONCILE_LOCK = 0x6D6A << 48  # transaction-scoped advisory lock: one replica reconciles at a time
_MAX_ERROR_CHARS = 2000
_RELEASE_TIMEOUT_S = 2.0


class JobWorker:
    def __init__(self, pool: asyncpg.Pool, settings: JobSettings, metrics: JobMetrics | None = None) -> None:
        self._pool = pool
        self._settings = settings
        self._metrics = metrics if metrics is not None else JobMetrics()
        self._handlers: dict[str, Handler] = {}
        self._reconcilers: list[Reconciler] = []
        self._wakeup = asyncio.Event()
        self._loops: list[asyncio.Task[None]] = []
        self._stopping = False
        self._claiming = 0  # claims in flight: their jobs are not in `_claimed` yet
        self._claimed: dict[int, Job] = {}  # claimed by this process, not yet finished or failed
        self._stranded: set[int] = set()  # claimed, then the database went away mid-run
        self._next_expiry_check = 0.0
        self.queue = JobQueue(settings, self.wake)

    def register(self, kind: str, handler: Handler, reconcile: Reconciler | None = None) -> None:
        """Run `handler` for jobs of `kind`; `reconcile(conn)` runs at start-up, in the reconciling
        transaction, to enqueue what the kind's jobs should cover but do not (e.g. rows left over)."""
        if kind in self._handlers:
            raise ValueError(f"a handler for {kind!r} is registered already")
        self._handlers[kind] = handler
        if reconcile is not None:
            self._reconcilers.append(reconcile)

    @property
    def kinds(self) -> list[str]:
        return sorted(self._handlers)

    async def start(self) -> None:
        """Reconcile, then start `settings.workers` loops."""
        if self._loops:
            return
        await self.reconcile()
        self._stopping = False
        self._loops = [
            asyncio.create_task(self._loop(), name=f"memoria-jobs-{i}") for i in range(self._settings.workers)
        ]

    def wake(self) -> None:
        """Jobs were committed: an idle loop looks now instead of at its next poll."""
        self._wakeup.set()

    async def stop(self, grace_s: float | None = None) -> None:
        """Stop claiming; let running batches finish within `grace_s` seconds (default
        `settings.stop_timeout_s`); cancel the rest and hand their jobs straight back to the queue
        (else their leases expire). Safe to call more than once."""
        self._stopping = True
        self._wakeup.set()
        loops, self._loops = self._loops, []
        if loops:
            wait = self._settings.stop_timeout_s if grace_s is None else grace_s
            _, pending = await asyncio.wait(loops, timeout=max(wait, 0.0))
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        leftover = sorted(self._claimed.keys() | self._stranded)
        self._claimed.clear()
        self._stranded.clear()
        if leftover:
            try:
                await asyncio.wait_for(self._pool.execute(sql.RELEASE, leftover), _RELEASE_TIMEOUT_S)
            except Exception:  # the database is away (a TimeoutError is an Exception too)
                log.warning("could not hand back %d unfinished jobs; their leases expire", len(leftover))

    async def reconcile(self) -> int:
        """Requeue jobs whose lease ran out and let each kind enqueue what is missing, in one
        transaction that one replica at a time runs. Returns the jobs requeued."""
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute(sql.LOCK_RECONCILE, RECONCILE_LOCK)
            requeued = await conn.fetch(sql.REQUEUE_EXPIRED, self._settings.max_attempts)
            for reconcile in self._reconcilers:
                await reconcile(conn)
        if requeued:
            log.info("requeued %d jobs whose worker stopped before finishing them", len(requeued))
        return len(requeued)

    async def run_once(self) -> int:
        """Claim one batch of due jobs and run it; returns how many were claimed."""
        jobs = await self._claim()
        if jobs:
            await self._run(jobs)
        return len(jobs)

    async def run_pending(self, within_s: float = 30.0) -> int:
        """Work the queue until no job is due and none of this process's loops is still running one
        (jobs waiting out a backoff are left). Deterministic draining for tests and commands; raises
        TimeoutError after `within_s` seconds. Returns the jobs this call ran."""
        deadline = time.monotonic() + within_s
        ran = 0
        while True:
            claimed = await self.run_once()
            ran += claimed
            if claimed:
                continue
            if not self._claiming and not self._claimed:
                due = await self._pool.fetchval(sql.COUNT_DUE, self.kinds)
                if not due:
                    return ran
            if time.monotonic() > deadline:
                raise TimeoutError(f"jobs still due or running after {within_s} s")
            await asyncio.sleep(0.01)

    async def _loop(self) -> None:
        failures = 0
        while not self._stopping:
            self._wakeup.clear()
            try:
                ran = await self.run_once() or await self._requeue_expired()
                failures = 0
            except Exception:
                failures += 1
                # the database is away (or restarting): back off, but a wake still ends the wait
                delay = min(30.0, self._settings.poll_interval_s * 2 ** min(failures, 5))
                level = logging.WARNING if failures == 1 or failures % 20 == 0 else logging.DEBUG
                log.log(
                    level, "job loop failed %d time(s); retrying in %.1f s", failures, delay, exc_info=True
                )
                await self._idle(delay)
                continue
            if not ran:
                await self._idle(self._settings.poll_interval_s)

    async def _idle(self, seconds: float) -> None:
        if self._stopping:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wakeup.wait(), seconds)

    async def _requeue_expired(self) -> int:
        """Now and then (not on every idle poll), hand out jobs whose lease ran out."""
        now = time.monotonic()
        if now < self._next_expiry_check:
            return 0
        settings = self._settings
        self._next_expiry_check = now + min(max(settings.lease_s / 10, settings.poll_interval_s), 30.0)
        requeued = await self._pool.fetch(sql.REQUEUE_EXPIRED, settings.max_attempts)
        if requeued:
            log.info("requeued %d jobs whose lease ran out", len(requeued))
        return len(requeued)

    async def _claim(self) -> list[Job]:
        if not self._handlers:
            return []
        if self._stranded:
            # the database is back: what we could not finish goes back to the queue now, not when
            # its lease runs out (a job whose work committed is gone already; RELEASE skips it)
            await self._pool.execute(sql.RELEASE, sorted(self._stranded))
            self._stranded.clear()
        self._claiming += 1
        try:
            rows = await self._pool.fetch(
                sql.CLAIM, self.kinds, self._settings.batch_size, self._settings.lease_s
            )
            jobs = sorted(
                (
                    Job(id=r["id"], kind=r["kind"], memory_id=r["memory_id"], attempts=r["attempts"])
                    for r in rows
                ),
                key=lambda job: job.id,
            )
            for job in jobs:
                self._claimed[job.id] = job
            return jobs
        finally:
            self._claiming -= 1

    async def _run(self, jobs: Sequence[Job]) -> None:
        """Run a claimed batch, kind by kind. When the database fails under it (its outcome cannot
        be recorded), its unfinished jobs are handed back at the next claim; on cancellation (stop)
        they stay claimed for `stop` to hand back."""
        try:
            by_kind: dict[str, list[Job]] = defaultdict(list)
            for job in jobs:
                by_kind[job.kind].append(job)
            for kind, group in by_kind.items():
                await self._run_group(kind, group)
        except Exception:
            for job in jobs:
                if self._claimed.pop(job.id, None) is not None:
                    self._stranded.add(job.id)
            raise

    async def _run_group(self, kind: str, group: Sequence[Job]) -> None:
        try:
            await self._handlers[kind](group)
        except BatchFailed as exc:
            await self._fail(group, exc)
            return
        except Exception as exc:
            if len(group) == 1:
                await self._fail(group, exc)
                return
            # find the culprit: each job alone, so one bad job does not hold back the others
            log.info("a batch of %d %s jobs failed (%s); running them one by one", len(group), kind, exc)
            for job in group:
                if self._stopping:
                    return  # the rest stay claimed; `stop` hands them back
                await self._run_group(kind, [job])
            return
        async with self._pool.acquire() as conn:
            await complete(conn, group)  # a no-op for jobs the handler completed in its transaction
        self._forget(group)

    async def _fail(self, group: Sequence[Job], exc: BaseException) -> None:
        settings = self._settings
        error = f"{type(exc).__name__}: {exc}"[:_MAX_ERROR_CHARS]
        final = [job.attempts >= settings.max_attempts for job in group]
        await self._pool.execute(
            sql.FAIL,
            [job.id for job in group],
            [settings.retry_delay_s(job.attempts) for job in group],
            final,
            error,
        )
        self._forget(group)
        for job, gave_up in zip(group, final, strict=True):
            self._metrics.failed(job.kind, gave_up)
            if gave_up:
                log.error(
                    "job %d (%s, memory %s) failed %d times, left failed: %s",
                    job.id,
                    job.kind,
                    job.memory_id,
                    job.attempts,
                    error,
                )
            else:
                log.warning(
                    "job %d (%s, memory %s) failed (attempt %d), retried in %.1f s: %s",
                    job.id,
                    job.kind,
                    job.memory_id,
                    job.attempts,
                    settings.retry_delay_s(job.attempts),
                    error,
                )

    def _forget(self, group: Sequence[Job]) -> None:
        for job in group:
            self._claimed.pop(job.id, None)
