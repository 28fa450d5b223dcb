"""SQL of the memory CRUD paths, kept in one place. Every query is scoped to the caller's user."""

MEMORY_COLUMNS = """
    m.id, n.name AS namespace, m.content, m.category, m.tags, m.importance, m.expanded_keywords,
    m.is_sensitive, m.source, m.metadata, m.embedding_model, m.created_at, m.updated_at, m.deleted_at
"""

EXISTING_HASHES = """
SELECT namespace_id, content_hash, id
FROM memories
WHERE deleted_at IS NULL
  AND (namespace_id, content_hash) IN (
      SELECT * FROM unnest($1::bigint[], $2::bytea[])
  )
"""

INSERT_MEMORY = """
INSERT INTO memories (
    namespace_id, content, category, tags, importance, expanded_keywords,
    is_sensitive, source, metadata, content_hash, embedding, embedding_model
)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
ON CONFLICT (namespace_id, content_hash) WHERE deleted_at IS NULL DO NOTHING
RETURNING id
"""

LIVE_ID_BY_HASH = """
SELECT id FROM memories WHERE namespace_id = $1 AND content_hash = $2 AND deleted_at IS NULL
"""

GET_MEMORY = f"""
SELECT {MEMORY_COLUMNS}
FROM memories m JOIN namespaces n ON n.id = m.namespace_id
WHERE m.id = $1 AND n.user_id = $2 AND (m.deleted_at IS NULL OR $3)
"""

# Keyset pagination over (created_at, id) descending: stable under concurrent inserts.
LIST_MEMORIES = f"""
SELECT {MEMORY_COLUMNS}
FROM memories m JOIN namespaces n ON n.id = m.namespace_id
WHERE n.user_id = $1
  AND ($2::bigint[] IS NULL OR m.namespace_id = ANY($2))
  AND ($3::text IS NULL OR m.category = $3)
  AND ($4::text[] IS NULL OR (CASE WHEN $5 THEN m.tags @> $4 ELSE m.tags && $4 END))
  AND ($6::timestamptz IS NULL OR m.created_at >= $6)
  AND ($7::timestamptz IS NULL OR m.created_at < $7)
  AND (m.deleted_at IS NULL OR $8)
  AND (NOT m.is_sensitive OR $9)
  AND ($10::timestamptz IS NULL OR (m.created_at, m.id) < ($10, $11::bigint))
ORDER BY m.created_at DESC, m.id DESC
LIMIT $12
"""

# The namespace of a live memory the user owns, read without a lock: a writer that touches the
# graph takes the namespace's graph lock before it locks the memory row (a memory never moves).
LIVE_NAMESPACE = """
SELECT m.namespace_id
FROM memories m JOIN namespaces n ON n.id = m.namespace_id
WHERE m.id = $1 AND n.user_id = $2 AND m.deleted_at IS NULL
"""

LOCK_MEMORY = """
SELECT m.id, m.namespace_id, m.content_hash, m.content
FROM memories m JOIN namespaces n ON n.id = m.namespace_id
WHERE m.id = $1 AND n.user_id = $2 AND m.deleted_at IS NULL
FOR UPDATE OF m
"""

# What the change left that decides its follow-up jobs.
UPDATE_MEMORY = """
UPDATE memories SET
    content           = coalesce($2, content),
    content_hash      = coalesce($3, content_hash),
    embedding         = CASE WHEN $4 THEN $5 ELSE embedding END,
    embedding_model   = CASE WHEN $4 THEN $6 ELSE embedding_model END,
    category          = CASE WHEN $7 THEN $8 ELSE category END,
    tags              = coalesce($9, tags),
    importance        = coalesce($10, importance),
    expanded_keywords = CASE WHEN $11 THEN $12 ELSE expanded_keywords END,
    is_sensitive      = coalesce($13, is_sensitive),
    source            = CASE WHEN $14 THEN $15 ELSE source END,
    metadata          = coalesce($16, metadata),
    updated_at        = now()
WHERE id = $1
RETURNING is_sensitive, embedding IS NULL AS unembedded
"""

# The namespace of a memory the user owns (deleted or not), read without a lock (see LIVE_NAMESPACE).
OWNED_NAMESPACE = """
SELECT m.namespace_id
FROM memories m JOIN namespaces n ON n.id = m.namespace_id
WHERE m.id = $1 AND n.user_id = $2
"""

# Taken after the namespace's graph lock; NULL when a purge removed the memory meanwhile.
LOCK_OWNED_MEMORY = """
SELECT id FROM memories WHERE id = $1 FOR UPDATE
"""

SOFT_DELETE = """
UPDATE memories m SET deleted_at = coalesce(m.deleted_at, now()), updated_at = now()
FROM namespaces n
WHERE n.id = m.namespace_id AND m.id = $1 AND n.user_id = $2
RETURNING m.id
"""

PURGE = """
DELETE FROM memories m USING namespaces n
WHERE n.id = m.namespace_id AND m.id = $1 AND n.user_id = $2
RETURNING m.id
"""
