-- The per-session ledger (migrations 0014, 0016): which memories each hook session has been given,
-- so that SessionStart and the prompt hook inject a memory at most once per session, and what each
-- cost in characters, so that they stay within one context budget per session. Rows are keyed by
-- the caller, the session id of the hook event and the memory's internal id; a row counts until
-- its `expires_at` and the episode expiry sweep deletes it after (app/memories/expiry.py).
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

-- name: lock_session
-- One session's answers one at a time (a transaction-scoped advisory lock on the session): two
-- prompts of one session racing must neither both inject a memory nor both spend the last of the
-- session's budget. Held until the answer's transaction ends; other sessions never wait for it
-- (a hash collision of two sessions' keys only makes them take turns).
SELECT pg_advisory_xact_lock(
    :lock_base::bigint
    + (hashtextextended(:user_id::bigint::text || ' ' || :session_id::text, 0) & 281474976710655)
)

-- name: session_state
-- Under the session's lock: the characters its unexpired rows cost (what its hooks injected), and
-- of the candidates (public ids, best first) the ones it has not been given, in candidate order.
-- An expired row not yet swept counts as neither.
SELECT (
           SELECT coalesce(sum(sl.chars), 0)
           FROM session_ledger sl
           WHERE sl.user_id = :user_id
             AND sl.session_id = :session_id::text
             AND sl.expires_at > now()
       )::bigint AS spent,
       ARRAY(
           SELECT c.public_id
           FROM unnest(:public_ids::bigint[]) WITH ORDINALITY AS c(public_id, position)
           JOIN memories m ON m.public_id = c.public_id
           WHERE {{ unseen(m, :user_id, :session_id::text) }}
           ORDER BY c.position
       ) AS unseen

-- name: record
-- Under the session's lock: the memories one answer injected, each with the characters it cost,
-- recorded as given now (an expired row not yet swept is renewed). The first row that can expire
-- starts the expiry sweep's chain unless a sweep is queued or running (as a capture does:
-- app/memories/expiry.py).
WITH recorded AS (
    INSERT INTO session_ledger AS sl (user_id, session_id, memory_id, injected_at, expires_at, chars)
    SELECT :user_id, :session_id, m.id, now(), now() + make_interval(secs => :ttl_s::integer), c.chars
    FROM unnest(:public_ids::bigint[], :chars::integer[]) AS c(public_id, chars)
    JOIN memories m ON m.public_id = c.public_id
    ON CONFLICT (user_id, session_id, memory_id) DO UPDATE
        SET injected_at = EXCLUDED.injected_at, expires_at = EXCLUDED.expires_at, chars = EXCLUDED.chars
    RETURNING sl.memory_id
)
INSERT INTO jobs (kind, memory_id, run_after)
SELECT :sweep_job::text, NULL, now() + make_interval(secs => :ttl_s::integer)
WHERE EXISTS (SELECT 1 FROM recorded)
  AND NOT EXISTS (SELECT 1 FROM jobs WHERE kind = :sweep_job::text AND state IN ('queued', 'running'))

-- name: release_pinned
-- After a compaction: the session's pinned memories are given to it again (they are meant to be in
-- context always, and the summary may have dropped them); their rows' characters leave the spend.
DELETE FROM session_ledger sl
USING memories m
WHERE sl.user_id = :user_id
  AND sl.session_id = :session_id
  AND m.id = sl.memory_id
  AND m.pinned

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
