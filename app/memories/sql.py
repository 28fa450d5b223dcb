"""SQL of the memory CRUD paths, kept in one place. Every query is scoped to the caller's user:
their own namespaces, and the namespaces shared with them (changes only with a `write` share).

A memory has two ids. The API only ever shows and takes `public_id` (random, see migration 0008),
which says nothing about anyone else's stores; the identity `id`, a counter shared by every tenant,
stays internal (jobs, graph links, sealed secrets). Queries that take an id from a caller take the
public one and answer the internal one beside it for the writes that follow; `MEMORY_COLUMNS`
names the public one `id`, the field the API answers with."""

from app.namespaces.sql import seen_namespaces, writable_namespaces

MEMORY_COLUMNS = """
    m.public_id AS id, n.name AS namespace, m.content, m.category, m.tags, m.importance, m.expanded_keywords,
    m.is_sensitive, m.has_secrets, m.source, m.metadata, m.embedding_model, m.created_at, m.updated_at,
    m.deleted_at, m.kind, m.pinned, m.expires_at, m.seen_count, m.last_seen_at
"""

EXISTING_HASHES = """
SELECT namespace_id, content_hash, id
FROM memories
WHERE deleted_at IS NULL
  AND (namespace_id, content_hash) IN (
      SELECT * FROM unnest($1::bigint[], $2::bytea[])
  )
"""

# No conflict target: DO NOTHING covers both unique indexes. Nothing returned means the namespace
# holds this content already (LIVE_ID_BY_HASH finds it), or else, about once in 2^53 / rows
# inserts, that the public id drawn is taken: inserting again draws another.
INSERT_MEMORY = """
INSERT INTO memories (
    namespace_id, content_hash, content, category, tags, importance, expanded_keywords,
    is_sensitive, source, metadata, embedding, embedding_model, has_secrets, pinned
)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
ON CONFLICT DO NOTHING
RETURNING id, public_id
"""

# A stored batch in one statement: one round trip instead of one per memory (a round trip per
# memory made a batch's transaction as slow as that many stores). DO NOTHING covers every unique
# index, as for one memory: a row left out (a content the namespace holds live, one given twice in
# the batch, a public id drawn twice) is inserted again alone by INSERT_MEMORY, which tells which
# it was. Each row's tags come as JSON text ($5): an array of arrays would be read as a 2-D array.
INSERT_MEMORIES = """
INSERT INTO memories (
    namespace_id, content_hash, content, category, tags, importance, expanded_keywords,
    is_sensitive, source, metadata, embedding, embedding_model, has_secrets, pinned
)
SELECT m.namespace_id, m.content_hash, m.content, m.category,
       ARRAY(SELECT jsonb_array_elements_text(m.tags::jsonb)), m.importance, m.expanded_keywords,
       m.is_sensitive, m.source, m.metadata, m.embedding, m.embedding_model, m.has_secrets, m.pinned
FROM unnest(
    $1::bigint[], $2::bytea[], $3::text[], $4::text[], $5::text[], $6::real[], $7::text[],
    $8::bool[], $9::text[], $10::jsonb[], $11::halfvec[], $12::text[], $13::bool[], $14::bool[]
) AS m (
    namespace_id, content_hash, content, category, tags, importance, expanded_keywords,
    is_sensitive, source, metadata, embedding, embedding_model, has_secrets, pinned
)
ON CONFLICT DO NOTHING
RETURNING id, public_id, namespace_id, content_hash
"""

# Captured episodes, a whole batch in one statement (no vectors: the embedding job computes them).
# DO NOTHING again covers every unique index: a row left out is a capture key the namespace holds
# already (CAPTURED finds it, deleted or not), a content it holds live (LIVE_BY_HASHES), or a
# public id drawn twice (inserted again alone). `created_at` defaults to now() when not given.
# Each row's tags come as JSON text ($5): an array of arrays would be read as a 2-D array.
INSERT_EPISODES = """
INSERT INTO memories (
    namespace_id, content_hash, content, category, tags, importance, expanded_keywords,
    is_sensitive, source, metadata, has_secrets, pinned, kind, expires_at, capture_key, created_at
)
SELECT e.namespace_id, e.content_hash, e.content, e.category,
       ARRAY(SELECT jsonb_array_elements_text(e.tags::jsonb)), e.importance, e.expanded_keywords,
       e.is_sensitive, e.source, e.metadata, e.has_secrets, false, 'episode', e.expires_at,
       e.capture_key, coalesce(e.created_at, now())
FROM unnest(
    $1::bigint[], $2::bytea[], $3::text[], $4::text[], $5::text[], $6::real[], $7::text[],
    $8::bool[], $9::text[], $10::jsonb[], $11::bool[], $12::timestamptz[], $13::text[],
    $14::timestamptz[]
) AS e (
    namespace_id, content_hash, content, category, tags, importance, expanded_keywords,
    is_sensitive, source, metadata, has_secrets, expires_at, capture_key, created_at
)
ON CONFLICT DO NOTHING
RETURNING id, public_id, namespace_id, capture_key
"""

# The memories (deleted ones too: a forgotten exchange is not captured again) holding these keys.
CAPTURED = """
SELECT m.id, m.public_id, m.namespace_id, m.capture_key
FROM memories m
WHERE (m.namespace_id, m.capture_key) IN (SELECT * FROM unnest($1::bigint[], $2::text[]))
"""

# Live memories holding these contents, with their public ids (what a duplicate answers).
LIVE_BY_HASHES = """
SELECT namespace_id, content_hash, id, public_id
FROM memories
WHERE deleted_at IS NULL
  AND (namespace_id, content_hash) IN (SELECT * FROM unnest($1::bigint[], $2::bytea[]))
"""


LIVE_ID_BY_HASH = """
SELECT id, public_id FROM memories WHERE namespace_id = $1 AND content_hash = $2 AND deleted_at IS NULL
"""

# `n.name` is the namespace as the caller calls it (`@owner/name` when it is shared with them).
GET_MEMORY = f"""
SELECT {MEMORY_COLUMNS}
FROM memories m JOIN ({seen_namespaces("$2")}) n ON n.id = m.namespace_id
WHERE m.public_id = $1 AND (m.deleted_at IS NULL OR ($3 AND n.owned))
"""

# Keyset pagination over (created_at, id) descending: stable under concurrent inserts. Without
# namespaces ($2 NULL): the user's own; shared ones only when named (ids resolved for this user).
# The second namespace clause repeats the first on `m`: a custom plan then reads the named
# namespaces through their index instead of joining the table.
# The cursor carries the last item's created_at and PUBLIC id ($10, $11); its internal id, which
# orders memories stored together (one created_at), is looked up here, among memories the caller
# can see. A cursor whose memory was purged since resolves to no id: the page then starts at the
# first memory of its created_at again, so a batch's memories may repeat but none is skipped.
LIST_MEMORIES = f"""
WITH page_after AS (
    SELECT coalesce(
        (SELECT m.id FROM memories m
         WHERE m.public_id = $11 AND m.namespace_id IN (SELECT id FROM ({seen_namespaces("$1")}) s)),
        9223372036854775807
    ) AS id
)
SELECT {MEMORY_COLUMNS}
FROM memories m JOIN ({seen_namespaces("$1")}) n ON n.id = m.namespace_id
WHERE (CASE WHEN $2::bigint[] IS NULL THEN n.owned ELSE n.id = ANY($2) END)
  AND ($2::bigint[] IS NULL OR m.namespace_id = ANY($2))
  AND ($3::text IS NULL OR m.category = $3)
  AND ($4::text[] IS NULL OR (CASE WHEN $5 THEN m.tags @> $4 ELSE m.tags && $4 END))
  AND ($6::timestamptz IS NULL OR m.created_at >= $6)
  AND ($7::timestamptz IS NULL OR m.created_at < $7)
  AND (m.deleted_at IS NULL OR ($8 AND n.owned))
  AND (NOT m.is_sensitive OR $9)
  AND ($10::timestamptz IS NULL OR (m.created_at, m.id) < ($10, (SELECT id FROM page_after)))
  AND ($13::text IS NULL OR m.kind = $13)
  AND ($14::bool IS NULL OR m.pinned = $14)
ORDER BY m.created_at DESC, m.id DESC
LIMIT $12
"""

# The internal id and namespace of a live memory (by public id) the user can see, and whether they
# may change it (theirs, or shared with them for writing), read without a lock: a writer that
# touches the graph takes the namespace's graph lock before it locks the memory row (a memory never
# moves).
LIVE_NAMESPACE = f"""
SELECT m.id, m.namespace_id, n.writable
FROM memories m JOIN ({seen_namespaces("$2")}) n ON n.id = m.namespace_id
WHERE m.public_id = $1 AND m.deleted_at IS NULL
"""

LOCK_MEMORY = f"""
SELECT m.id, m.namespace_id, m.content_hash, m.content
FROM memories m
WHERE m.id = $1 AND m.deleted_at IS NULL AND m.namespace_id IN ({writable_namespaces("$2")})
FOR UPDATE OF m
"""

# What the change left that decides its follow-up jobs. $19: promote it (an episode becomes a
# curated memory that never expires; an episode's `importance` then defaults to at least 0.5).
UPDATE_MEMORY = """
UPDATE memories SET
    content           = coalesce($2, content),
    content_hash      = coalesce($3, content_hash),
    embedding         = CASE WHEN $4 THEN $5 ELSE embedding END,
    embedding_model   = CASE WHEN $4 THEN $6 ELSE embedding_model END,
    category          = CASE WHEN $7 THEN $8 ELSE category END,
    tags              = coalesce($9, tags),
    importance        = coalesce(
        $10, CASE WHEN $19 AND kind = 'episode' THEN greatest(importance, 0.5) ELSE importance END
    ),
    expanded_keywords = CASE WHEN $11 THEN $12 ELSE expanded_keywords END,
    is_sensitive      = coalesce($13, is_sensitive),
    source            = CASE WHEN $14 THEN $15 ELSE source END,
    metadata          = coalesce($16, metadata),
    has_secrets       = $17,
    pinned            = coalesce($18, pinned),
    kind              = CASE WHEN $19 THEN 'memory' ELSE kind END,
    expires_at        = CASE WHEN $19 THEN NULL ELSE expires_at END,
    updated_at        = now()
WHERE id = $1
RETURNING is_sensitive, embedding IS NULL AS unembedded
"""

# The free-text fields of a memory the caller has just locked (LOCK_MEMORY): what an edit's
# redaction numbers after and merges with.
LOCKED_TEXT = """
SELECT content, category, tags, expanded_keywords, source, metadata FROM memories WHERE id = $1
"""

# A live memory (by public id) in one of the caller's OWN namespaces (never a shared one): the
# sealed originals of its credentials are for its owner alone.
OWNED_LIVE_TEXT = """
SELECT m.id, m.content, m.category, m.tags, m.expanded_keywords, m.source, m.metadata
FROM memories m JOIN namespaces n ON n.id = m.namespace_id
WHERE m.public_id = $1 AND n.user_id = $2 AND m.deleted_at IS NULL
"""

AUDIT_READ = """
INSERT INTO secret_reads (memory_id, user_id, key_id, secrets, client) VALUES ($1, $2, $3, $4, $5)
"""

# `memoria secrets scan`: every memory (deleted ones too: they still hold their text), by id.
SCAN_COLUMNS = """
    id, namespace_id, content, category, tags, expanded_keywords, source, metadata, is_sensitive,
    deleted_at IS NOT NULL AS deleted
"""
SCAN_BATCH = f"SELECT {SCAN_COLUMNS} FROM memories WHERE id > $1 ORDER BY id LIMIT $2"

# The same rows again, locked, after their namespaces' graph locks (the lock order of every writer).
SCAN_LOCK = f"SELECT {SCAN_COLUMNS} FROM memories WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE"

# A live memory other than $3 with this content in the namespace: the redacted text duplicates it.
LIVE_TWIN = """
SELECT id FROM memories
WHERE namespace_id = $1 AND content_hash = $2 AND deleted_at IS NULL AND id <> $3
"""

# A memory stored in clear, redacted in place. Its vector was computed on the clear text, so it goes
# (an embedding job computes the new one); $9: it duplicates a live memory once redacted, and so is
# deleted as a store would have answered `duplicate`.
REDACT_STORED = """
UPDATE memories SET
    content = $2, category = $3, tags = $4, expanded_keywords = $5, source = $6, metadata = $7,
    content_hash = $8, has_secrets = true, embedding = NULL, embedding_model = NULL,
    deleted_at = CASE WHEN $9 THEN coalesce(deleted_at, now()) ELSE deleted_at END,
    updated_at = now()
WHERE id = $1
"""

# LIVE_NAMESPACE for a memory deleted or not.
OWNED_NAMESPACE = f"""
SELECT m.id, m.namespace_id, n.writable
FROM memories m JOIN ({seen_namespaces("$2")}) n ON n.id = m.namespace_id
WHERE m.public_id = $1
"""

# Taken after the namespace's graph lock; NULL when a purge removed the memory meanwhile.
LOCK_OWNED_MEMORY = """
SELECT id FROM memories WHERE id = $1 FOR UPDATE
"""

SOFT_DELETE = f"""
UPDATE memories m SET deleted_at = coalesce(m.deleted_at, now()), updated_at = now()
WHERE m.id = $1 AND m.namespace_id IN ({writable_namespaces("$2")})
RETURNING m.id
"""

# Undo a soft delete; the live-content unique index refuses it when a live memory of the namespace
# has the same content by now (LIVE_CLASH names it).
RESTORE = f"""
UPDATE memories m SET deleted_at = NULL, updated_at = now()
WHERE m.id = $1 AND m.deleted_at IS NOT NULL AND m.namespace_id IN ({writable_namespaces("$2")})
RETURNING m.id, m.is_sensitive, m.embedding IS NULL AS unembedded
"""

LIVE_CLASH = """
SELECT live.public_id FROM memories m
JOIN memories live ON live.namespace_id = m.namespace_id AND live.content_hash = m.content_hash
WHERE m.id = $1 AND live.deleted_at IS NULL AND live.id <> m.id
"""

PURGE = f"""
DELETE FROM memories m
WHERE m.id = $1 AND m.namespace_id IN ({writable_namespaces("$2")})
RETURNING m.id
"""

# Internal ids by public id, in the order asked (for in-process tools: see MemoryService.internal_ids).
INTERNAL_IDS = """
SELECT m.id FROM unnest($1::bigint[]) WITH ORDINALITY AS p (public_id, ord)
JOIN memories m ON m.public_id = p.public_id
ORDER BY p.ord
"""
