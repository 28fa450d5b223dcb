-- The automatic supersede's SQL (app/links/supersede.py runs it, in the transaction that wrote the
-- new memory): the memory just written, and the few older memories of its namespace it may replace.
--
-- Candidates are live (not in the trash), not sensitive (a sensitive memory is never replaced
-- without its owner asking, nor replaces one), current (`valid_to IS NULL`: not superseded, not
-- ended), older than the new memory, embedded with the same model, nearest first by cosine
-- distance. Two reads, as recall's dense leg (app/recall/recall.sql): an exact scan of the
-- namespace's vectors when it holds fewer than :exact_below of them (counted, stopping there), else
-- the HNSW index walk (with the transaction's hnsw.iterative_scan, filtered results stay full), and
-- the exact scan after it only when the walk came back short (a namespace that is a sliver of a big
-- table). The count decides, not the planner: right after a bulk import into a namespace the
-- planner's statistics still see it empty and would sort the whole namespace for every memory
-- (app/links/supersede.py sets the planner so, around this statement). A third read finds the
-- older memories that name a value the new one says is gone ("moved from Sentry to GlitchTip"):
-- by the namespace's text index (memories_scope_search_idx), each name a prefix ("Timescale"
-- finds "TimescaleDB"), nearest of them first; they count beside the nearest, however far.

-- fragment: candidate(o, new)
-- An older memory of the new one's namespace that the new one may replace.
o.namespace_id = new.namespace_id
AND o.id <> new.id
AND {{ visible(o, false) }}
AND o.valid_to IS NULL
AND o.created_at < new.created_at
AND o.embedding IS NOT NULL
AND o.embedding_model = new.embedding_model

-- name: supersede_subjects
-- The memories just written, as the rule reads them; none without a vector or sensitive.
SELECT m.id, m.public_id, m.namespace_id, m.content, m.kind, m.category, m.tags, m.created_at
FROM memories m
WHERE m.id = ANY(:memory_ids::bigint[]) AND m.embedding IS NOT NULL AND {{ visible(m, false) }}

-- name: supersede_candidates_of_many
-- The candidates of every memory just written (one, or a batch), in one statement: per memory
-- (`s`), the nearest by the exact scan of a small namespace or the HNSW walk of a bigger one (the
-- exact scan too when the walk came back short), and the ones naming a value it says is gone, each
-- row tagged with the memory it is a candidate of; each memory's nearest first.
SELECT s.memory_id AS subject_id, c.*
FROM unnest(:memory_ids::bigint[], :gone_names::text[]) AS s (memory_id, gone_names)
CROSS JOIN LATERAL (
    WITH new AS MATERIALIZED (
        SELECT m.id, m.namespace_id, m.embedding, m.embedding_model, m.created_at
        FROM memories m
        WHERE m.id = s.memory_id AND m.embedding IS NOT NULL AND {{ visible(m, false) }}
    ),
    small AS MATERIALIZED (
        SELECT count(*) < :exact_below::integer AS yes
        FROM (
            SELECT 1
            FROM new, memories o
            WHERE o.namespace_id = new.namespace_id AND o.deleted_at IS NULL AND o.embedding IS NOT NULL
            LIMIT :exact_below
        ) counted
    ),
    ann AS (
        SELECT o.id, o.embedding <=> new.embedding AS distance
        FROM new, memories o
        WHERE NOT (SELECT yes FROM small)
          AND {{ candidate(o, new) }}
        ORDER BY o.embedding <=> (SELECT embedding FROM new)
        LIMIT :limit::integer
    ),
    exact AS (
        SELECT o.id, o.embedding <=> new.embedding AS distance
        FROM new, memories o
        WHERE ((SELECT yes FROM small) OR (SELECT count(*) FROM ann) < :limit)
          AND {{ candidate(o, new) }}
        ORDER BY (o.embedding <=> new.embedding) + 0
        LIMIT :limit
    ),
    gone AS (
        SELECT string_agg(quote_literal(lexeme) || ':*', ' | ')::tsquery AS query
        FROM unnest(tsvector_to_array(to_tsvector('english', coalesce(s.gone_names, '')))) lexeme
    ),
    named AS (
        SELECT o.id, o.embedding <=> new.embedding AS distance
        FROM new, gone, memories o
        WHERE gone.query IS NOT NULL
          AND memoria_scope_search(o.namespace_id, o.search_vector)
              @@ memoria_scope_query(new.namespace_id, gone.query)
          AND {{ candidate(o, new) }}
        ORDER BY (o.embedding <=> new.embedding) + 0, o.id
        LIMIT :limit
    ),
    nearest AS (
        SELECT DISTINCT ON (id) id, distance
        FROM (SELECT * FROM ann UNION ALL SELECT * FROM exact UNION ALL SELECT * FROM named) found
        ORDER BY id
    )
    SELECT o.id, o.public_id, o.content, o.kind, o.category, o.tags, o.created_at,
           (1 - nearest.distance)::float8 AS similarity
    FROM nearest JOIN memories o ON o.id = nearest.id
    ORDER BY nearest.distance, o.id
    LIMIT 2 * :limit
) c
ORDER BY s.memory_id, c.similarity DESC, c.id

-- name: supersede_owners
-- The memories an embedding job just gave a vector, with their namespace's owner (as whom the
-- automatic supersede links them) and their public id.
SELECT m.id, m.public_id, n.user_id
FROM memories m JOIN namespaces n ON n.id = m.namespace_id
WHERE m.id = ANY(:memory_ids::bigint[]) AND m.embedding IS NOT NULL AND {{ visible(m, false) }}
ORDER BY m.created_at, m.id
