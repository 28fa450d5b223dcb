-- How many memories of each namespace hold each lexeme: what the lexical leg's term rarity reads
-- (recall.sql, `lexical_idf`). app/recall/term_counts.py runs these in the counting job's
-- transaction; migration 0018 explains the tables and the triggers that enqueue the job.
--
-- A memory is counted with its namespace and lexemes while it is live and not sensitive;
-- `memory_terms` holds what it is counted with now. Counting a memory compares the two and moves
-- the counts by the difference only, so running a job twice (a retry, a second job for the same
-- change) changes nothing the second time.

-- name: lock_term_namespaces
-- The count locks of every namespace the memories are or were counted in, in namespace order (the
-- DELETE trigger takes them in that order too): two writers of one namespace's counts queue
-- instead of deadlocking. Returns the namespaces locked.
SELECT s.namespace_id, pg_advisory_xact_lock(:lock_base::bigint + s.namespace_id)
FROM (
    SELECT namespace_id FROM memories WHERE id = ANY(:memory_ids::bigint[])
    UNION
    SELECT namespace_id FROM memory_terms WHERE memory_id = ANY(:memory_ids::bigint[])
    ORDER BY 1
) s

-- name: count_terms
-- Brings the memories' counts up to date, in one statement: the lexemes each memory is counted
-- with and those it holds now, their difference per (namespace, lexeme), added to the counts.
-- A memory whose namespace moved to one not locked (between the lock and this statement) is left
-- alone and returned as `skipped`: the caller then rolls back, and the job runs again.
-- Also returns the (lexeme, namespace) rows the change emptied, for delete_empty_terms.
WITH counted AS MATERIALIZED (
    SELECT t.memory_id, t.namespace_id, t.lexemes
    FROM memory_terms t
    WHERE t.memory_id = ANY(:memory_ids::bigint[])
),
live AS MATERIALIZED (
    SELECT m.id AS memory_id, m.namespace_id, tsvector_to_array(m.search_vector) AS lexemes
    FROM memories m
    WHERE m.id = ANY(:memory_ids::bigint[]) AND m.deleted_at IS NULL AND NOT m.is_sensitive
),
compared AS MATERIALIZED (
    SELECT memory_id, c.namespace_id AS old_namespace, c.lexemes AS old_lexemes,
           l.namespace_id AS new_namespace, l.lexemes AS new_lexemes,
           (c.namespace_id IS NULL OR c.namespace_id = ANY(:locked::bigint[]))
           AND (l.namespace_id IS NULL OR l.namespace_id = ANY(:locked::bigint[])) AS covered
    FROM counted c
    FULL JOIN live l USING (memory_id)
    WHERE c.namespace_id IS DISTINCT FROM l.namespace_id OR c.lexemes IS DISTINCT FROM l.lexemes
),
changed AS (
    SELECT * FROM compared WHERE covered
),
term_deltas AS (
    SELECT namespace_id, lexeme, sum(delta)::integer AS delta
    FROM (
        SELECT old_namespace, unnest(old_lexemes), -1 FROM changed WHERE old_namespace IS NOT NULL
        UNION ALL
        SELECT new_namespace, unnest(new_lexemes), 1 FROM changed WHERE new_namespace IS NOT NULL
    ) d (namespace_id, lexeme, delta)
    GROUP BY 1, 2
    HAVING sum(delta) <> 0
),
terms AS (
    -- in key order, so that two statements adding to the same rows lock them in the same order
    INSERT INTO term_counts AS c (lexeme, namespace_id, memories)
    SELECT lexeme, namespace_id, delta FROM term_deltas ORDER BY lexeme, namespace_id
    ON CONFLICT (lexeme, namespace_id) DO UPDATE SET memories = c.memories + EXCLUDED.memories
    RETURNING c.lexeme, c.namespace_id, c.memories
),
documents AS (
    INSERT INTO namespace_terms AS n (namespace_id, memories)
    SELECT namespace_id, sum(delta)
    FROM (
        SELECT old_namespace, -1 FROM changed WHERE old_namespace IS NOT NULL
        UNION ALL
        SELECT new_namespace, 1 FROM changed WHERE new_namespace IS NOT NULL
    ) d (namespace_id, delta)
    GROUP BY 1
    HAVING sum(delta) <> 0
    ORDER BY 1
    ON CONFLICT (namespace_id) DO UPDATE SET memories = n.memories + EXCLUDED.memories
),
uncounted AS (
    DELETE FROM memory_terms t
    USING changed c
    WHERE t.memory_id = c.memory_id AND c.new_namespace IS NULL
),
recounted AS (
    INSERT INTO memory_terms AS t (memory_id, namespace_id, lexemes)
    SELECT memory_id, new_namespace, new_lexemes FROM changed WHERE new_namespace IS NOT NULL
    ORDER BY memory_id
    ON CONFLICT (memory_id) DO UPDATE SET namespace_id = EXCLUDED.namespace_id, lexemes = EXCLUDED.lexemes
)
SELECT 'emptied' AS what, lexeme, namespace_id, NULL::bigint AS memory_id FROM terms WHERE memories <= 0
UNION ALL
SELECT 'skipped', NULL, NULL, memory_id FROM compared WHERE NOT covered

-- name: delete_empty_terms
-- The (lexeme, namespace) rows no memory holds any more.
DELETE FROM term_counts c
USING unnest(:lexemes::text[], :namespace_ids::bigint[]) AS e (lexeme, namespace_id)
WHERE c.lexeme = e.lexeme AND c.namespace_id = e.namespace_id AND c.memories <= 0

-- name: pending_term_counts
-- Memories with a counting job, whatever its state (for counting without workers).
SELECT DISTINCT memory_id FROM jobs
WHERE kind = 'recall.term_counts' AND memory_id IS NOT NULL
ORDER BY memory_id
LIMIT :limit

-- name: complete_term_counts
-- The memories' counting jobs, done with this transaction. A job row another transaction holds is
-- skipped, not waited for: a purge's cascade deletes it while it waits for this transaction's
-- count locks (its DELETE trigger), which would be a deadlock; if that transaction rolls back,
-- the job stays and runs again, and counts nothing twice.
DELETE FROM jobs
WHERE id IN (
    SELECT id FROM jobs
    WHERE kind = 'recall.term_counts' AND memory_id = ANY(:memory_ids::bigint[])
    ORDER BY id
    FOR UPDATE SKIP LOCKED
)
