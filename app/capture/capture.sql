-- The capture domain's own statements, each under `-- name: <name>`, with named parameters
-- (:name) exactly as PostgreSQL runs them otherwise (app/db/queries.py reads this file on first
-- use; app/capture/queries.py binds each statement's parameters by name).

-- name: fold_episodes
-- Each incoming exchange (its position in the batch) whose fingerprint (`fold_key`) a live memory
-- of its namespace holds folds into the oldest such memory, unless the namespace holds the
-- exchange's own capture key already (then it was stored before: a duplicate, not a repeat).
-- A sighting counts when it happened after the memory's last one (`last_seen_at`, else its
-- `created_at`): the same exchange sent again by a re-flushed spool counts once. Folding pushes
-- an episode's expiry back as capturing it anew would; a curated memory (no expiry) keeps none.
-- `counted` tells the caller which sightings were new.
WITH incoming AS (
    SELECT i.position, i.namespace_id, i.fold_key, i.capture_key, i.seen_at, i.expires_at
    FROM unnest(
        :namespace_ids::bigint[], :fold_keys::bytea[], :capture_keys::text[],
        :seen_at::timestamptz[], :expires_at::timestamptz[]
    ) WITH ORDINALITY AS i (namespace_id, fold_key, capture_key, seen_at, expires_at, position)
    WHERE NOT EXISTS (
        SELECT 1 FROM memories c
        WHERE c.namespace_id = i.namespace_id AND c.capture_key = i.capture_key
    )
),
matched AS (
    SELECT i.position, i.seen_at, i.expires_at, t.id, t.public_id, t.since
    FROM incoming i
    CROSS JOIN LATERAL (
        SELECT m.id, m.public_id, coalesce(m.last_seen_at, m.created_at) AS since
        FROM memories m
        WHERE m.namespace_id = i.namespace_id
          AND m.fold_key = i.fold_key
          AND m.deleted_at IS NULL
        ORDER BY m.created_at, m.id
        LIMIT 1
    ) t
),
sightings AS (
    SELECT id,
           count(*) FILTER (WHERE seen_at > since) AS new_sightings,
           max(seen_at) AS latest,
           max(expires_at) AS expires_at
    FROM matched
    GROUP BY id
),
folded AS (
    UPDATE memories m
    SET seen_count = m.seen_count + s.new_sightings,
        last_seen_at = CASE
            WHEN s.new_sightings > 0 THEN greatest(coalesce(m.last_seen_at, m.created_at), s.latest)
            ELSE m.last_seen_at
        END,
        expires_at = CASE WHEN m.expires_at IS NULL THEN NULL ELSE greatest(m.expires_at, s.expires_at) END
    FROM sightings s
    WHERE m.id = s.id
      AND (s.new_sightings > 0 OR m.expires_at < s.expires_at)
    RETURNING m.id
)
SELECT position, public_id, seen_at > since AS counted
FROM matched
ORDER BY position;

-- name: set_fold_keys
-- The fingerprints of episodes just stored, so that the next repeat of each folds into it.
-- Only a memory without one is written: a content that was a live memory already keeps its own.
UPDATE memories m
SET fold_key = s.fold_key
FROM unnest(:public_ids::bigint[], :fold_keys::bytea[]) AS s (public_id, fold_key)
WHERE m.public_id = s.public_id
  AND m.fold_key IS NULL
  AND m.kind = 'episode';
