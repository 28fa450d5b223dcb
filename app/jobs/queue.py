"""The queue's vocabulary: a job, how a service adds one inside its own transaction, how a handler
completes its jobs inside the transaction that does their work.

Most jobs are about one memory (`memory_id`, a foreign key with `ON DELETE CASCADE`): purging the
memory removes its jobs, and a handler treats a job whose memory is gone or deleted as done. A
periodic or namespace-wide job (the episode expiry sweep) has no memory: `memory_id` is None. The
queue knows no job kinds; domains name their own and register handlers for them (`app.factory`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import asyncpg

from app.jobs import sql
from app.jobs.settings import JobSettings


@dataclass(frozen=True, slots=True)
class Job:
    id: int
    kind: str
    memory_id: int | None  # None: a job about no single memory
    attempts: int  # runs so far, this one included


@dataclass(frozen=True, slots=True)
class NewJob:
    kind: str
    memory_id: int | None
    failed_first_try: str | None = None
    """Set when the caller already tried the work and failed (the error): the job then starts as
    one failed attempt, waiting its backoff instead of retrying a provider that just failed."""


class BatchFailed(Exception):
    """Raised by a handler when the failure belongs to no single job (a provider outage): every job
    of the batch backs off together instead of being retried one by one to find a culprit."""


async def complete(conn: asyncpg.Connection, jobs: Sequence[Job]) -> None:
    """Delete finished jobs; call it inside the transaction that did their work, so the work and the
    job's end commit together (a crash in between leaves the job to run again)."""
    if jobs:
        await conn.execute(sql.COMPLETE, sorted(job.id for job in jobs))


async def complete_for_memories(conn: asyncpg.Connection, kind: str, memory_ids: Sequence[int]) -> None:
    """Delete every pending `kind` job of these memories: the caller just brought them up to date
    (also when it did not run as a job, e.g. `memoria graph rebuild`)."""
    if memory_ids:
        await conn.execute(sql.COMPLETE_FOR_MEMORIES, kind, list(memory_ids))


class JobQueue:
    """The producer side: what a service needs to add jobs in its own transaction, then wake the
    workers of this process (other processes find the jobs by polling)."""

    def __init__(self, settings: JobSettings, wake: Callable[[], None] | None = None) -> None:
        self._settings = settings
        self._wake = wake

    async def add(self, conn: asyncpg.Connection, jobs: Iterable[NewJob]) -> int:
        """Insert the jobs inside the caller's transaction; returns how many."""
        batch = list(jobs)
        if not batch:
            return 0
        first_delay = self._settings.retry_delay_s(1)
        await conn.execute(
            sql.ENQUEUE,
            [j.kind for j in batch],
            [j.memory_id for j in batch],
            [0 if j.failed_first_try is None else 1 for j in batch],
            [j.failed_first_try for j in batch],
            [0.0 if j.failed_first_try is None else first_delay for j in batch],
        )
        return len(batch)

    def wake(self) -> None:
        """After the enqueuing transaction committed: let an idle worker of this process look now."""
        if self._wake is not None:
            self._wake()
