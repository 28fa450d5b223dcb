-- The per-session ledger (migration 0014): which memories each hook session has been given, so
-- that SessionStart and the prompt hook inject a memory at most once per session. Rows are keyed
-- by the caller, the session id of the hook event and the memory's internal id; a row counts
-- until its `expires_at` and the episode expiry sweep deletes it after (app/memories/expiry.py).
-- Only the hook routes read or write it: REST /v1/recall and MCP stay stateless.

-- fragment: unseen(m, user_id, session_id)
-- Memory m has not been given to this session (a NULL session: no ledger, every memory passes).
(session_id IS NULL OR NOT EXISTS (
    SELECT 1
    FROM session_ledger seen
    WHERE seen.user_id = user_id
      AND seen.session_id = session_id
      AND seen.memory_id = m.id
      AND seen.expires_at > now()
))

-- name: claim
-- The ledger filter and the record in one statement: of the candidates (public ids, best first),
-- the first :max_new this session has not been given are recorded as given now and returned (in
-- no particular order). The insert is the arbiter: two prompts of one session racing for the same
-- memory both see it unseen, only one of them inserts it and gets it back. An expired row not yet
-- swept counts as unseen and is renewed. The first row that can expire starts the expiry sweep's
-- chain unless a sweep is queued or running (as a capture does: app/memories/expiry.py).
WITH candidate AS (
    SELECT m.id AS memory_id
    FROM unnest(:public_ids::bigint[]) WITH ORDINALITY AS c(public_id, position)
    JOIN memories m ON m.public_id = c.public_id
    WHERE {{ unseen(m, :user_id, :session_id::text) }}
    ORDER BY c.position
    LIMIT :max_new
),
recorded AS (
    INSERT INTO session_ledger AS sl (user_id, session_id, memory_id, injected_at, expires_at)
    SELECT :user_id, :session_id, memory_id, now(), now() + make_interval(secs => :ttl_s::integer)
    FROM candidate
    ON CONFLICT (user_id, session_id, memory_id) DO UPDATE
        SET injected_at = EXCLUDED.injected_at, expires_at = EXCLUDED.expires_at
        WHERE sl.expires_at <= now()
    RETURNING sl.memory_id
),
sweep AS (
    INSERT INTO jobs (kind, memory_id, run_after)
    SELECT :sweep_job::text, NULL, now() + make_interval(secs => :ttl_s::integer)
    WHERE EXISTS (SELECT 1 FROM recorded)
      AND NOT EXISTS (SELECT 1 FROM jobs WHERE kind = :sweep_job::text AND state IN ('queued', 'running'))
)
SELECT m.public_id
FROM recorded r
JOIN memories m ON m.id = r.memory_id

-- name: release
-- Claimed memories that did not fit the answer after all (its character budget): not given.
DELETE FROM session_ledger
WHERE user_id = :user_id
  AND session_id = :session_id
  AND memory_id IN (SELECT id FROM memories WHERE public_id = ANY(:public_ids::bigint[]))

-- name: sweep_expired
-- One batch of rows past their expiry, soonest first (session_ledger_expires_at_idx); a row
-- another transaction holds is left to the next run, never waited for.
DELETE FROM session_ledger
WHERE (user_id, session_id, memory_id) IN (
    SELECT user_id, session_id, memory_id
    FROM session_ledger
    WHERE expires_at < now()
    ORDER BY expires_at
    LIMIT :batch
    FOR UPDATE SKIP LOCKED
)
