-- The links domain's SQL (migration 0015): typed links between two memories of one namespace,
-- read "source <kind> target". Ids from callers are public ones; the links hold internal ids.
--
-- uses: app.namespaces/fragments.sql

-- fragment: link_end_columns(m, n)
m.public_id, m.id, m.namespace_id, n.name AS namespace, n.writable, m.deleted_at IS NULL AS live,
m.valid_from, m.valid_to, m.created_at, m.content, m.kind AS memory_kind

-- fragment: owned_by(m, user)
-- m's namespace is the user's own (not one shared with them).
m.namespace_id IN (SELECT id FROM namespaces WHERE user_id = user)

-- fragment: supersede_end(m, at)
-- When a superseded memory stops holding: when its successor starts (`at`), never before it
-- started itself, and never later than an end it had already.
least(coalesce(m.valid_to, 'infinity'::timestamptz), greatest(at, coalesce(m.valid_from, m.created_at)))

-- name: lock_ends
-- Both ends of a link to be made or undone, by public id, among the memories the caller may see
-- (what is in the trash only in their own namespaces: a grantee never sees the owner's trash),
-- locked in id order (two writers linking the same pair both ways wait, never deadlock).
SELECT {{ link_end_columns(m, n) }}
FROM memories m JOIN ({{ seen_namespaces(:user_id::bigint) }}) n ON n.id = m.namespace_id
WHERE m.public_id = ANY(:public_ids::bigint[]) AND {{ seen(m, n.owned, true, true) }}
ORDER BY m.id
FOR UPDATE OF m

-- name: lock_namespace_links
-- One link writer per namespace at a time: the cycle check and the insert after it see every
-- link made before them (the key's first half names this lock among the app's advisory locks).
SELECT pg_advisory_xact_lock(hashtext('memoria.links'), :namespace_id::bigint::integer)

-- name: reaches
-- Whether `kind` links lead from one memory to the other (a link the other way would close a cycle).
WITH RECURSIVE walk (id, depth) AS (
    SELECT :from_id::bigint, 0
    UNION
    SELECT l.target_id, w.depth + 1
    FROM walk w
    JOIN memory_links l ON l.source_id = w.id AND l.kind = :kind::text
    WHERE w.depth < :max_depth::integer
)
SELECT EXISTS (SELECT 1 FROM walk WHERE id = :to_id::bigint)

-- name: superseded_by
-- The memory that supersedes this one, if any (a memory is superseded at most once).
SELECT s.public_id
FROM memory_links l JOIN memories s ON s.id = l.source_id
WHERE l.target_id = :memory_id::bigint AND l.kind = 'supersedes'

-- name: insert_link
-- A new link; a supersede keeps what the old memory's validity was, to give it back on undo.
INSERT INTO memory_links (source_id, target_id, kind, origin, reason, target_valid_to_before)
SELECT :source_id::bigint, :target_id::bigint, :kind::text, :origin::text, :reason::text,
       CASE WHEN :kind = 'supersedes' THEN t.valid_to END
FROM memories t
WHERE t.id = :target_id
ON CONFLICT ON CONSTRAINT memory_links_once DO NOTHING
RETURNING id, created_at

-- name: end_superseded
-- The memories `source` supersedes stop holding when it starts to (its valid_from, or now). Each
-- link keeps the validity its old memory had, for undo.
WITH source AS (
    SELECT coalesce(s.valid_from, now()) AS starts FROM memories s WHERE s.id = :source_id::bigint
),
kept AS (
    UPDATE memory_links l SET target_valid_to_before = t.valid_to
    FROM memories t
    WHERE l.source_id = :source_id AND l.kind = 'supersedes' AND t.id = l.target_id
      AND (:target_id::bigint IS NULL OR l.target_id = :target_id)
    RETURNING l.target_id
)
UPDATE memories m
SET valid_to = {{ supersede_end(m, (SELECT starts FROM source)) }}, updated_at = now()
FROM kept
WHERE m.id = kept.target_id

-- name: reopen_superseded
-- The memories `source` superseded hold again as they did before (the newer one is deleted, or
-- the link undone: :target_id NULL for all of them).
UPDATE memories m SET valid_to = l.target_valid_to_before, updated_at = now()
FROM memory_links l
WHERE l.source_id = :source_id::bigint AND l.kind = 'supersedes' AND m.id = l.target_id
  AND (:target_id::bigint IS NULL OR l.target_id = :target_id)

-- name: delete_link
DELETE FROM memory_links
WHERE source_id = :source_id::bigint AND kind = :kind::text AND target_id = :target_id::bigint
RETURNING id

-- name: links_of
-- Every link of one memory, both ways, with the memory at the other end (only live ones the
-- reader may see: a link to a memory in the trash shows again when it is restored).
SELECT l.kind, 'out' AS direction, l.origin, l.reason, l.created_at AS linked_at,
       {{ link_end_columns(o, n) }}
FROM memory_links l
JOIN memories o ON o.id = l.target_id
JOIN ({{ seen_namespaces(:user_id::bigint) }}) n ON n.id = o.namespace_id
WHERE l.source_id = :memory_id::bigint AND {{ visible_to(o, n.owned, true) }}
UNION ALL
SELECT l.kind, 'in', l.origin, l.reason, l.created_at,
       {{ link_end_columns(o, n) }}
FROM memory_links l
JOIN memories o ON o.id = l.source_id
JOIN ({{ seen_namespaces(:user_id::bigint) }}) n ON n.id = o.namespace_id
WHERE l.target_id = :memory_id::bigint AND {{ visible_to(o, n.owned, true) }}
ORDER BY linked_at, public_id

-- name: namespace_links
-- Every link among a namespace's memories (export), by public ids, oldest first: only links whose
-- two ends an export of the same namespaces writes (live, sensitive ones only when asked for).
SELECT s.public_id AS source, l.kind, t.public_id AS target, l.origin, l.reason, l.created_at
FROM memory_links l
JOIN memories s ON s.id = l.source_id
JOIN memories t ON t.id = l.target_id
WHERE s.namespace_id = ANY(:namespace_ids::bigint[])
  AND {{ visible_to(s, {{ owned_by(s, :user_id::bigint) }}, :include_sensitive::boolean) }}
  AND {{ visible_to(t, {{ owned_by(t, :user_id) }}, :include_sensitive) }}
ORDER BY l.created_at, l.id

-- name: seen_memory
-- The internal id of a memory (by public id) the caller may see, live or in their trash.
SELECT m.id
FROM memories m JOIN ({{ seen_namespaces(:user_id::bigint) }}) n ON n.id = m.namespace_id
WHERE m.public_id = :public_id::bigint AND {{ seen(m, n.owned, true, true) }}
