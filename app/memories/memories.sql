-- The memory domain's SQL, one named query each (app/db/queries.py reads them; the dataclass of
-- the same name in app/memories/queries.py binds each one's :named parameters).
--
-- Every query is scoped to the caller's user: their own namespaces, and the namespaces shared with
-- them (changes only with a `write` share). A memory has two ids. The API only ever shows and takes
-- `public_id` (random, see migration 0008), which says nothing about anyone else's stores; the
-- identity `id`, a counter shared by every tenant, stays internal (jobs, graph links, sealed
-- secrets). Queries that take an id from a caller take the public one and answer the internal one
-- beside it for the writes that follow; `memory_columns` names the public one `id`, the field the
-- API answers with. Batches arrive as one array per column, unnested into rows; tags come as JSON
-- text, one per row (an array of arrays would be read as a 2-D array).
--
-- uses: app.namespaces/fragments.sql

-- fragment: memory_columns(m, n)
m.public_id AS id, n.name AS namespace, m.content, m.category, m.tags, m.importance, m.expanded_keywords,
m.is_sensitive, m.has_secrets, m.source, m.metadata, m.embedding_model, m.created_at, m.updated_at,
m.deleted_at, m.kind, m.pinned, m.expires_at, m.seen_count, m.last_seen_at, m.valid_from, m.valid_to,
(SELECT s.public_id FROM memory_links l JOIN memories s ON s.id = l.source_id
 WHERE l.target_id = m.id AND l.kind = 'supersedes' AND {{ visible_to(s, n.owned, true) }}) AS superseded_by

-- fragment: scan_columns()
id, namespace_id, content, category, tags, expanded_keywords, source, metadata, is_sensitive,
deleted_at IS NOT NULL AS deleted

-- name: existing_hashes
-- The live memories already holding these contents (a store skips embedding them).
SELECT namespace_id, content_hash, id
FROM memories
WHERE deleted_at IS NULL
  AND (namespace_id, content_hash) IN (
      SELECT * FROM unnest(:namespace_ids::bigint[], :content_hashes::bytea[])
  )

-- name: insert_memories
-- A stored batch in one statement: one round trip instead of one per memory. DO NOTHING covers
-- every unique index: a row left out is a content the namespace holds live, one given twice in the
-- batch, or a public id drawn twice; the store then tries it again alone (a batch of one), and a
-- row left out again is a live twin (live_id_by_hash finds it) or, about once in 2^53 / rows
-- inserts, an id drawn taken once more.
INSERT INTO memories (
    namespace_id, content_hash, content, category, tags, importance, expanded_keywords,
    is_sensitive, source, metadata, embedding, embedding_model, has_secrets, pinned, valid_from, valid_to
)
SELECT m.namespace_id, m.content_hash, m.content, m.category,
       ARRAY(SELECT jsonb_array_elements_text(m.tags::jsonb)), m.importance, m.expanded_keywords,
       m.is_sensitive, m.source, m.metadata, m.embedding, m.embedding_model, m.has_secrets, m.pinned,
       m.valid_from, m.valid_to
FROM unnest(
    :namespace_ids::bigint[], :content_hashes::bytea[], :contents::text[], :categories::text[],
    :tags_json::text[], :importances::real[], :expanded_keywords::text[], :sensitive::bool[],
    :sources::text[], :metadata::jsonb[], :embeddings::halfvec[], :embedding_models::text[],
    :has_secrets::bool[], :pinned::bool[], :valid_froms::timestamptz[], :valid_tos::timestamptz[]
) AS m (
    namespace_id, content_hash, content, category, tags, importance, expanded_keywords,
    is_sensitive, source, metadata, embedding, embedding_model, has_secrets, pinned, valid_from, valid_to
)
ON CONFLICT DO NOTHING
RETURNING id, public_id, namespace_id, content_hash

-- name: insert_episodes
-- Captured episodes, a whole batch in one statement (no vectors: the embedding job computes them).
-- DO NOTHING again covers every unique index: a row left out is a capture key the namespace holds
-- already (captured finds it, deleted or not), a content it holds live (live_by_hashes), or a
-- public id drawn twice (inserted again alone). `created_at` defaults to now() when not given.
INSERT INTO memories (
    namespace_id, content_hash, content, category, tags, importance, expanded_keywords,
    is_sensitive, source, metadata, has_secrets, pinned, kind, expires_at, capture_key, created_at
)
SELECT e.namespace_id, e.content_hash, e.content, e.category,
       ARRAY(SELECT jsonb_array_elements_text(e.tags::jsonb)), e.importance, e.expanded_keywords,
       e.is_sensitive, e.source, e.metadata, e.has_secrets, false, 'episode', e.expires_at,
       e.capture_key, coalesce(e.created_at, now())
FROM unnest(
    :namespace_ids::bigint[], :content_hashes::bytea[], :contents::text[], :categories::text[],
    :tags_json::text[], :importances::real[], :expanded_keywords::text[], :sensitive::bool[],
    :sources::text[], :metadata::jsonb[], :has_secrets::bool[], :expires_at::timestamptz[],
    :capture_keys::text[], :created_at::timestamptz[]
) AS e (
    namespace_id, content_hash, content, category, tags, importance, expanded_keywords,
    is_sensitive, source, metadata, has_secrets, expires_at, capture_key, created_at
)
ON CONFLICT DO NOTHING
RETURNING id, public_id, namespace_id, capture_key

-- name: captured
-- The memories (deleted ones too: a forgotten exchange is not captured again) holding these keys.
SELECT m.id, m.public_id, m.namespace_id, m.capture_key
FROM memories m
WHERE (m.namespace_id, m.capture_key) IN (SELECT * FROM unnest(:namespace_ids::bigint[], :capture_keys::text[]))

-- name: live_by_hashes
-- Live memories holding these contents, with their public ids (what a duplicate answers).
SELECT namespace_id, content_hash, id, public_id
FROM memories
WHERE deleted_at IS NULL
  AND (namespace_id, content_hash) IN (SELECT * FROM unnest(:namespace_ids::bigint[], :content_hashes::bytea[]))

-- name: live_id_by_hash
SELECT id, public_id FROM memories
WHERE namespace_id = :namespace_id::bigint AND content_hash = :content_hash::bytea AND deleted_at IS NULL

-- name: get_memory
-- `n.name` is the namespace as the caller calls it (`@owner/name` when it is shared with them).
SELECT {{ memory_columns(m, n) }}
FROM memories m JOIN ({{ seen_namespaces(:user_id::bigint) }}) n ON n.id = m.namespace_id
WHERE m.public_id = :public_id::bigint AND {{ seen(m, n.owned, true, :include_deleted::boolean) }}

-- name: list_memories
-- Keyset pagination over (created_at, id) descending: stable under concurrent inserts. Without
-- namespaces (:namespace_ids NULL): the user's own; shared ones only when named (ids resolved for
-- this user). The second namespace clause repeats the first on `m`: a custom plan then reads the
-- named namespaces through their index instead of joining the table.
-- The cursor carries the last item's created_at and PUBLIC id; its internal id, which orders
-- memories stored together (one created_at), is looked up here, among memories the caller can
-- see. A cursor whose memory was purged since resolves to no id: the page then starts at the first
-- memory of its created_at again, so a batch's memories may repeat but none is skipped. The trash
-- (:include_deleted, own namespaces only) shows deleted memories beside the visible ones.
WITH page_after AS (
    SELECT coalesce(
        (SELECT m.id FROM memories m
         WHERE m.public_id = :after_public_id::bigint
           AND m.namespace_id IN (SELECT id FROM ({{ seen_namespaces(:user_id::bigint) }}) s)),
        9223372036854775807
    ) AS id
)
SELECT {{ memory_columns(m, n) }}
FROM memories m JOIN ({{ seen_namespaces(:user_id::bigint) }}) n ON n.id = m.namespace_id
WHERE (CASE WHEN :namespace_ids::bigint[] IS NULL THEN n.owned ELSE n.id = ANY(:namespace_ids) END)
  AND (:namespace_ids::bigint[] IS NULL OR m.namespace_id = ANY(:namespace_ids))
  AND (:category::text IS NULL OR m.category = :category)
  AND (:source::text IS NULL OR m.source = :source)
  AND (:tags::text[] IS NULL OR (CASE WHEN :tags_match_all::boolean THEN m.tags @> :tags ELSE m.tags && :tags END))
  AND (:created_since::timestamptz IS NULL OR m.created_at >= :created_since)
  AND (:created_until::timestamptz IS NULL OR m.created_at < :created_until)
  AND {{ seen(m, n.owned, :include_sensitive::boolean, :include_deleted::boolean) }}
  AND (:after_created_at::timestamptz IS NULL OR (m.created_at, m.id) < (:after_created_at, (SELECT id FROM page_after)))
  AND (:kind::text IS NULL OR m.kind = :kind)
  AND (:pinned::bool IS NULL OR m.pinned = :pinned)
  AND (:include_superseded::boolean OR {{ current(m, :as_of::timestamptz) }})
ORDER BY m.created_at DESC, m.id DESC
LIMIT :limit::integer

-- name: live_namespace
-- The internal id and namespace of a live memory (by public id) the user can see, and whether they
-- may change it (theirs, or shared with them for writing), read without a lock: a writer that
-- touches the graph takes the namespace's graph lock before it locks the memory row (a memory never
-- moves).
SELECT m.id, m.namespace_id, n.writable
FROM memories m JOIN ({{ seen_namespaces(:user_id::bigint) }}) n ON n.id = m.namespace_id
WHERE m.public_id = :public_id::bigint AND {{ visible_to(m, n.owned, true) }}

-- name: lock_memory
-- `captured`: a captured turn, whose vector the embedding job computes (app/embeddings/inputs.sql).
SELECT m.id, m.namespace_id, m.content_hash, m.content, m.capture_key IS NOT NULL AS captured
FROM memories m
WHERE m.id = :memory_id::bigint AND m.deleted_at IS NULL
  AND m.namespace_id IN ({{ writable_namespaces(:user_id::bigint) }})
FOR UPDATE OF m

-- name: update_memory
-- A change: each field the patch sets (a `set_<field>` flag where NULL is a value to set, else a
-- NULL leaves it); what the change left decides its follow-up jobs. :promote makes an episode a
-- curated memory that never expires (its `importance` then defaults to at least 0.5).
UPDATE memories SET
    content           = coalesce(:content::text, content),
    content_hash      = coalesce(:content_hash::bytea, content_hash),
    embedding         = CASE WHEN :set_embedding::boolean THEN :embedding::halfvec ELSE embedding END,
    embedding_model   = CASE WHEN :set_embedding THEN :embedding_model::text ELSE embedding_model END,
    category          = CASE WHEN :set_category::boolean THEN :category::text ELSE category END,
    tags              = coalesce(:tags::text[], tags),
    importance        = coalesce(
        :importance::real, CASE WHEN :promote::boolean AND kind = 'episode' THEN greatest(importance, 0.5) ELSE importance END
    ),
    expanded_keywords = CASE WHEN :set_expanded_keywords::boolean THEN :expanded_keywords::text ELSE expanded_keywords END,
    is_sensitive      = coalesce(:is_sensitive::boolean, is_sensitive),
    source            = CASE WHEN :set_source::boolean THEN :source::text ELSE source END,
    metadata          = coalesce(:metadata::jsonb, metadata),
    has_secrets       = :has_secrets::boolean,
    pinned            = coalesce(:pinned::boolean, pinned),
    valid_from        = CASE WHEN :set_valid_from::boolean THEN :valid_from::timestamptz ELSE valid_from END,
    valid_to          = CASE WHEN :set_valid_to::boolean THEN :valid_to::timestamptz ELSE valid_to END,
    kind              = CASE WHEN :promote THEN 'memory' ELSE kind END,
    expires_at        = CASE WHEN :promote THEN NULL ELSE expires_at END,
    updated_at        = now()
WHERE id = :memory_id::bigint
RETURNING is_sensitive, embedding IS NULL AS unembedded

-- name: locked_text
-- The free-text fields of a memory the caller has just locked (lock_memory): what an edit's
-- redaction numbers after and merges with.
SELECT content, category, tags, expanded_keywords, source, metadata FROM memories WHERE id = :memory_id::bigint

-- name: owned_live_text
-- A live memory (by public id) in one of the caller's OWN namespaces (never a shared one): the
-- sealed originals of its credentials are for its owner alone.
SELECT m.id, m.content, m.category, m.tags, m.expanded_keywords, m.source, m.metadata
FROM memories m JOIN namespaces n ON n.id = m.namespace_id
WHERE m.public_id = :public_id::bigint AND n.user_id = :user_id::bigint AND m.deleted_at IS NULL

-- name: audit_read
INSERT INTO secret_reads (memory_id, user_id, key_id, secrets, client)
VALUES (:memory_id::bigint, :user_id::bigint, :key_id::bigint, :secrets::integer, :client::text)

-- name: scan_batch
-- `memoria secrets scan`: every memory (deleted ones too: they still hold their text), by id.
SELECT {{ scan_columns() }} FROM memories WHERE id > :after_id::bigint ORDER BY id LIMIT :limit::integer

-- name: scan_lock
-- The same rows again, locked, after their namespaces' graph locks (the lock order of every writer).
SELECT {{ scan_columns() }} FROM memories WHERE id = ANY(:memory_ids::bigint[]) ORDER BY id FOR UPDATE

-- name: live_twin
-- A live memory other than this one with this content in the namespace: the redacted text duplicates it.
SELECT id FROM memories
WHERE namespace_id = :namespace_id::bigint AND content_hash = :content_hash::bytea AND deleted_at IS NULL
  AND id <> :memory_id::bigint

-- name: redact_stored
-- A memory stored in clear, redacted in place. Its vector was computed on the clear text, so it goes
-- (an embedding job computes the new one); :duplicate: it duplicates a live memory once redacted,
-- and so is deleted as a store would have answered `duplicate`.
UPDATE memories SET
    content = :content::text, category = :category::text, tags = :tags::text[],
    expanded_keywords = :expanded_keywords::text, source = :source::text, metadata = :metadata::jsonb,
    content_hash = :content_hash::bytea, has_secrets = true, embedding = NULL, embedding_model = NULL,
    deleted_at = CASE WHEN :duplicate::boolean THEN coalesce(deleted_at, now()) ELSE deleted_at END,
    updated_at = now()
WHERE id = :memory_id::bigint

-- name: owned_namespace
-- live_namespace, or for its owner a memory in the trash too (a grantee's delete, restore or purge
-- of a memory the owner deleted, or marked sensitive, answers 404, as for an id nobody has).
SELECT m.id, m.namespace_id, n.writable
FROM memories m JOIN ({{ seen_namespaces(:user_id::bigint) }}) n ON n.id = m.namespace_id
WHERE m.public_id = :public_id::bigint AND {{ seen(m, n.owned, true, true) }}

-- name: lock_owned_memory
-- Taken after the namespace's graph lock; NULL when a purge removed the memory meanwhile.
SELECT id FROM memories WHERE id = :memory_id::bigint FOR UPDATE

-- name: soft_delete
UPDATE memories m SET deleted_at = coalesce(m.deleted_at, now()), updated_at = now()
WHERE m.id = :memory_id::bigint AND m.namespace_id IN ({{ writable_namespaces(:user_id::bigint) }})
RETURNING m.id

-- name: restore
-- Undo a soft delete; the live-content unique index refuses it when a live memory of the namespace
-- has the same content by now (live_clash names it).
UPDATE memories m SET deleted_at = NULL, updated_at = now()
WHERE m.id = :memory_id::bigint AND m.deleted_at IS NOT NULL
  AND m.namespace_id IN ({{ writable_namespaces(:user_id::bigint) }})
RETURNING m.id, m.is_sensitive, m.embedding IS NULL AS unembedded

-- name: live_clash
SELECT live.public_id FROM memories m
JOIN memories live ON live.namespace_id = m.namespace_id AND live.content_hash = m.content_hash
WHERE m.id = :memory_id::bigint AND live.deleted_at IS NULL AND live.id <> m.id

-- name: purge
DELETE FROM memories m
WHERE m.id = :memory_id::bigint AND m.namespace_id IN ({{ writable_namespaces(:user_id::bigint) }})
RETURNING m.id

-- name: internal_ids
-- Internal ids by public id, in the order asked (for in-process tools: see MemoryReads.internal_ids).
SELECT m.id FROM unnest(:public_ids::bigint[]) WITH ORDINALITY AS p (public_id, ord)
JOIN memories m ON m.public_id = p.public_id
ORDER BY p.ord
