-- What text is embedded for a memory: the one rule every path that embeds a stored memory reads
-- (the embedding job, `memoria embeddings backfill`, `memoria embeddings reembed`), so that
-- re-embedding reproduces the vectors the first embedding wrote. app/embeddings/inputs.py binds it.

-- name: embedding_inputs
-- Each memory of `ids` (live, sensitive ones only when a model may embed them) with the text to
-- embed for it, and the content hash that text was read with (a write checks it: a memory edited
-- meanwhile is embedded again by its own job).
--
-- A curated memory is embedded as its content. A captured turn (a memory with a capture key) is
-- embedded with its neighbourhood, which gives a short turn ("Yes, the second one") what it is
-- about: a first line with its date (when the exchange happened: `created_at`), when `with_date`;
-- then the start of its previous turn, at most `previous_chars` characters of it (0: none), ending
-- in an ellipsis when cut; then its own content. Only the vector sees this: the content, the
-- lexical search text and every reader still see the turn alone.
--
-- The previous turn is the captured memory of the same session (`metadata.session_id`) in the same
-- namespace that comes last before this one in the order of the session: turn, then chunk, then
-- time and id (a batch stored at once shares one time), so turns stored out of order or in one
-- batch get the same neighbour. Only a memory every reader of the namespace may see can be one
-- (`visible` without sensitive ones: live, not sensitive): the text of a deleted or sensitive
-- memory never reaches another memory's vector, and a namespace is one owner's, so neither does
-- another owner's. memories_session_turns_idx (migration 0019) finds it in one index lookup.
SELECT m.id, m.content_hash,
       m.is_sensitive,
       concat_ws(
           E'\n',
           CASE
               WHEN :with_date::boolean AND m.capture_key IS NOT NULL
               THEN to_char(m.created_at AT TIME ZONE 'UTC', 'FMDD FMMonth YYYY')
           END,
           CASE
               WHEN char_length(previous.content) > :previous_chars::integer
               THEN left(previous.content, :previous_chars) || '…'
               ELSE previous.content
           END,
           m.content
       ) AS input
FROM memories m
LEFT JOIN LATERAL (
    SELECT p.content
    FROM memories p
    WHERE :previous_chars > 0
      AND m.capture_key IS NOT NULL
      AND p.namespace_id = m.namespace_id
      AND p.metadata->>'session_id' = m.metadata->>'session_id'
      AND p.capture_key IS NOT NULL
      AND {{ visible(p, false) }}
      AND (p.metadata->'turn', p.metadata->'chunk', p.created_at, p.id)
          < (m.metadata->'turn', m.metadata->'chunk', m.created_at, m.id)
    ORDER BY p.metadata->'turn' DESC, p.metadata->'chunk' DESC, p.created_at DESC, p.id DESC
    LIMIT 1
) previous ON true
WHERE m.id = ANY(:ids::bigint[])
  AND m.deleted_at IS NULL
  AND (NOT m.is_sensitive OR :sensitive_ok::boolean)
ORDER BY m.id;

-- name: forget_next_turn_vectors
-- The other side of the rule: the captured turn that comes next after each of `ids` in its session
-- (the turn whose vector the memory may be part of) loses its vector, so that its embedding job
-- computes it again from its neighbourhood as it is now. Run when a captured turn is stored (an
-- earlier turn arriving late), its text changes, it becomes sensitive, is deleted or restored: a
-- vector never keeps the start of a turn that is no longer its neighbour, nor of one turned
-- sensitive. Only with the previous turn in the input (`previous_chars` > 0), and only vectors that
-- exist (a turn stored in the same batch has its job already). Returns the memories to embed again.
WITH next AS (
    SELECT DISTINCT n.id
    FROM memories m
    CROSS JOIN LATERAL (
        SELECT s.id
        FROM memories s
        WHERE s.namespace_id = m.namespace_id
          AND s.metadata->>'session_id' = m.metadata->>'session_id'
          AND s.capture_key IS NOT NULL
          AND s.deleted_at IS NULL
          AND (s.metadata->'turn', s.metadata->'chunk', s.created_at, s.id)
              > (m.metadata->'turn', m.metadata->'chunk', m.created_at, m.id)
        ORDER BY s.metadata->'turn', s.metadata->'chunk', s.created_at, s.id
        LIMIT 1
    ) n
    WHERE m.id = ANY(:ids::bigint[])
      AND m.capture_key IS NOT NULL
      AND :previous_chars::integer > 0
),
locked AS (  -- memory rows in id order, as every writer of several locks them
    SELECT s.id FROM memories s JOIN next USING (id)
    WHERE s.embedding IS NOT NULL
    ORDER BY s.id
    FOR UPDATE OF s
)
UPDATE memories s
SET embedding = NULL, embedding_model = NULL
FROM locked
WHERE s.id = locked.id
RETURNING s.id;
