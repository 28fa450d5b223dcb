"""SQL of the job queue. A job is a row; `state` is `queued` (waiting for `run_after`), `running`
(claimed, leased until `leased_until`) or `failed` (gave up after `max_attempts`, kept as a record).
A finished job is deleted, in the same transaction as its work where the handler can."""

# The producer side, inside the caller's transaction: the job commits (or not) with the change that
# needs it. `attempts`/`last_error` record a first try the caller already made (a failed embedding).
ENQUEUE = """
INSERT INTO jobs (kind, memory_id, attempts, last_error, run_after)
SELECT j.kind, j.memory_id, j.attempts, j.last_error, now() + make_interval(secs => j.delay_s)
FROM unnest($1::text[], $2::bigint[], $3::int[], $4::text[], $5::float8[])
    AS j (kind, memory_id, attempts, last_error, delay_s)
"""

# Due jobs of the kinds this process can run, oldest first; rows another worker holds are skipped,
# never waited for. The claim commits at once and takes no other lock, so it never sits in a
# lock cycle with the work (which takes its own locks, in its own order, in a later transaction).
CLAIM = """
WITH due AS (
    SELECT id FROM jobs
    WHERE state = 'queued' AND run_after <= now() AND kind = ANY($1::text[])
    ORDER BY run_after, id
    LIMIT $2
    FOR UPDATE SKIP LOCKED
)
UPDATE jobs j
SET state = 'running',
    attempts = j.attempts + 1,
    leased_until = now() + make_interval(secs => $3),
    updated_at = now()
FROM due
WHERE j.id = due.id
RETURNING j.id, j.kind, j.memory_id, j.attempts
"""

# Rows are locked in id order, so two transactions completing overlapping sets wait, never deadlock.
COMPLETE = """
DELETE FROM jobs
WHERE id IN (SELECT id FROM jobs WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE)
"""

# A handler that brought some memories up to date completes every pending job of that kind for them.
COMPLETE_FOR_MEMORIES = """
DELETE FROM jobs
WHERE id IN (
    SELECT id FROM jobs WHERE kind = $1 AND memory_id = ANY($2::bigint[]) ORDER BY id FOR UPDATE
)
"""

# One failed run of each job: back to `queued` after its backoff, or `failed` once out of attempts.
# Only a job still running is touched (a purge may have removed it, a completion deleted it).
FAIL = """
UPDATE jobs j
SET state = CASE WHEN f.final THEN 'failed' ELSE 'queued' END,
    run_after = now() + make_interval(secs => f.delay_s),
    leased_until = NULL,
    last_error = $4,
    updated_at = now()
FROM unnest($1::bigint[], $2::float8[], $3::bool[]) AS f (id, delay_s, final)
WHERE j.id = f.id AND j.state = 'running'
"""

# Leases that ran out: the worker died (kill -9, lost node) or hung. The run counts as an attempt.
REQUEUE_EXPIRED = """
UPDATE jobs j
SET state = CASE WHEN j.attempts >= $1 THEN 'failed' ELSE 'queued' END,
    run_after = now(),
    leased_until = NULL,
    last_error = 'lease expired: the worker stopped or ran longer than the lease',
    updated_at = now()
WHERE j.id IN (
    SELECT id FROM jobs WHERE state = 'running' AND leased_until < now() FOR UPDATE SKIP LOCKED
)
RETURNING j.id
"""

# Jobs a stopping worker claimed but did not run: free at once, and the claim does not count.
RELEASE = """
UPDATE jobs
SET state = 'queued', run_after = now(), leased_until = NULL,
    attempts = greatest(attempts - 1, 0), updated_at = now()
WHERE id = ANY($1::bigint[]) AND state = 'running'
"""

# Start-up reconciliation runs in one replica at a time (transaction-scoped: fine behind PgBouncer).
LOCK_RECONCILE = "SELECT pg_advisory_xact_lock($1::bigint)"

# What `run_pending` waits for: jobs due now (a claim may have skipped them while another held them).
COUNT_DUE = """
SELECT count(*) FROM jobs WHERE state = 'queued' AND run_after <= now() AND kind = ANY($1::text[])
"""
