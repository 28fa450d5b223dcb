"""Episode expiry: a durable job that deletes expired, unpinned episodes in small batches.

Expiry is never a long delete in a request: one job row of kind `EXPIRE_JOB` (about no memory:
`memory_id` is NULL) runs a sweep that deletes at most `expiry_batch` episodes in one transaction,
the way a purge deletes a memory (its concept-graph evidence first, then the row, whose sealed
secrets and pending jobs cascade away), and enqueues its own next run in that same transaction: at
once when the batch was full (more are due), else after `expiry_interval_s`. The chain therefore
survives crashes (the job row commits or rolls back with its work) and restarts; `reconcile`, at
start-up, makes sure exactly one such job is queued or running, whatever happened before (a chain
that ran out of attempts, two replicas that both enqueued one).

The same sweep deletes, in the same transaction, at most `expiry_batch` rows of the per-session
ledger past their expiry (`app.memories.ledger`): the ledger has no timer of its own.

The chain lives only while some episode can expire (`expires_at` set) or some ledger row is left:
a database without either keeps an empty queue and no timer. Only a capture sets `expires_at`
(promotion clears it), and it starts the chain in its own transaction (`ensure_sweep`) when none is
queued or running; the hook routes' ledger record does the same (`ledger.sql`, `claim`).

Locks follow the order of every graph writer: the namespaces' graph locks, then the memory rows
(`FOR UPDATE SKIP LOCKED`: a row an edit holds is left to the next run, never waited for).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import asyncpg

from app.graph import lock_graph, unlink_memories
from app.jobs import Job, complete
from app.memories.ledger import SweepExpired
from app.memories.settings import MemorySettings

log = logging.getLogger(__name__)

EXPIRE_JOB = "memories.expire"

# Candidates, soonest expired first, read without locks (memories_expires_at_idx).
EXPIRED = """
SELECT id, namespace_id
FROM memories
WHERE expires_at < now() AND kind = 'episode' AND NOT pinned
ORDER BY expires_at
LIMIT $1
"""

# The candidates again, locked after their namespaces' graph locks, re-checked: a recall may have
# pushed one's expiry back, a promotion or a pin saved it meanwhile.
LOCK_EXPIRED = """
SELECT id
FROM memories
WHERE id = ANY($1::bigint[]) AND expires_at < now() AND kind = 'episode' AND NOT pinned
ORDER BY id
FOR UPDATE SKIP LOCKED
"""

DELETE_EXPIRED = "DELETE FROM memories WHERE id = ANY($1::bigint[])"

# Whether some episode can still expire (pinned ones too: unpinning one needs no new job), or some
# ledger row is left to delete.
_EXPIRABLE = (
    "(EXISTS (SELECT 1 FROM memories WHERE expires_at IS NOT NULL AND kind = 'episode')"
    " OR EXISTS (SELECT 1 FROM session_ledger))"
)

# The sweep's next run: unless one is queued already (another replica's run enqueued it), or no
# episode is left to expire (the next capture starts the chain again).
ENQUEUE_NEXT = f"""
INSERT INTO jobs (kind, memory_id, run_after)
SELECT $1, NULL, now() + make_interval(secs => $2)
WHERE NOT EXISTS (SELECT 1 FROM jobs WHERE kind = $1 AND state = 'queued') AND {_EXPIRABLE}
"""

# A capture stored episodes: start the chain unless a sweep is queued or running.
ENSURE_SWEEP = """
INSERT INTO jobs (kind, memory_id, run_after)
SELECT $1, NULL, now() + make_interval(secs => $2)
WHERE NOT EXISTS (SELECT 1 FROM jobs WHERE kind = $1 AND state IN ('queued', 'running'))
"""

# Start-up: keep one queued or running sweep (a running one first, then the oldest) and drop the
# others; none left (the chain gave up after its attempts, or never started) while some episode can
# expire: enqueue one, due now. One statement: the DELETE and the INSERT read one snapshot.
RECONCILE = f"""
WITH live AS (
    SELECT id, row_number() OVER (ORDER BY state = 'running' DESC, id) AS n
    FROM jobs
    WHERE kind = $1 AND state IN ('queued', 'running')
),
dropped AS (
    DELETE FROM jobs WHERE id IN (SELECT id FROM live WHERE n > 1)
)
INSERT INTO jobs (kind, memory_id)
SELECT $1, NULL
WHERE NOT EXISTS (SELECT 1 FROM live) AND {_EXPIRABLE}
"""


async def ensure_sweep(conn: asyncpg.Connection, delay_s: float) -> None:
    """In the transaction that stored episodes: a sweep is queued (after `delay_s`) or running."""
    await conn.execute(ENSURE_SWEEP, EXPIRE_JOB, delay_s)


class ExpiryJobs:
    """Handler of `EXPIRE_JOB` and its start-up reconciliation."""

    def __init__(self, pool: asyncpg.Pool, settings: MemorySettings) -> None:
        self._pool = pool
        self._batch = settings.expiry_batch
        self._interval_s = settings.expiry_interval_s

    async def run(self, jobs: Sequence[Job]) -> None:
        """One sweep, whatever number of sweep jobs were claimed together; completes them and
        enqueues the next in the sweep's transaction."""
        await self.sweep(jobs)

    async def sweep(self, jobs: Sequence[Job] = ()) -> int:
        """Delete at most one batch of expired unpinned episodes, and one of expired ledger rows;
        returns how many episodes went."""
        async with self._pool.acquire() as conn, conn.transaction():
            candidates = await conn.fetch(EXPIRED, self._batch)
            deleted: list[int] = []
            if candidates:
                await lock_graph(conn, {r["namespace_id"] for r in candidates})  # before the rows
                locked = await conn.fetch(LOCK_EXPIRED, [r["id"] for r in candidates])
                deleted = [r["id"] for r in locked]
            if deleted:
                # as a purge does: the graph evidence first (the cascade would not take back counts)
                await unlink_memories(conn, deleted)
                await conn.execute(DELETE_EXPIRED, deleted)
            ledger_status = await SweepExpired(batch=self._batch).execute(conn)
            ledger_rows = int(ledger_status.split()[-1])
            await complete(conn, jobs)
            # more are due: go on at once
            full = (len(candidates) >= self._batch and bool(deleted)) or ledger_rows >= self._batch
            await conn.execute(ENQUEUE_NEXT, EXPIRE_JOB, 0.0 if full else self._interval_s)
        if deleted:
            log.info("deleted %d expired episodes", len(deleted))
        if ledger_rows:
            log.info("deleted %d expired session ledger rows", ledger_rows)
        return len(deleted)

    async def reconcile(self, conn: asyncpg.Connection) -> None:
        await conn.execute(RECONCILE, EXPIRE_JOB)
