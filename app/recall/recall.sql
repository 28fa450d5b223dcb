-- Recall: every leg, the fusion and the ordering, in ONE statement.
--
-- This is the statement as PostgreSQL runs it, except that parameters are named (:name) and each
-- rule it repeats is written once, as a fragment below, and used as `{{ fragment(args) }}`
-- (app/db/queries.py expands them on first use; `visible_to` is app/db/fragments.sql's, shared with
-- every read path; `association` is the concept graph's, app/graph/fragments.sql).
-- uses: app.graph/fragments.sql
-- app/recall/statement.py binds the parameters from RecallArgs, whose field order numbers them $1,
-- $2, ... (in the order the expanded statement first uses them).
--
-- Legs are CTEs that each yield (id, rank): lexical, dense, graph; the graph leg also starts from
-- the best hits of the first two. Fusion is weighted Reciprocal Rank Fusion, sum(w_leg / (k +
-- rank_leg)), where a leg that did not return a memory adds 0 (or, with :score_fusion, the sum of
-- each leg's weight times its min-max normalised score); then the importance prior, then the
-- requested sort.
--
-- The statement runs its connection's cached generic plan: one plan for every scope, filter and
-- weight, so no part may need the parameters' values to plan well. Some text repeats for that
-- reason alone. Each such pattern is explained here, once, and named where it occurs:
--
-- [leg switch] `:w_<leg>::float8 > 0` in a leg's WHERE. A weight of 0 makes the WHERE a constant
--   false (a one-time filter), so the leg does not run at all; ablations run this very statement.
--   A dense weight above 0 always comes with a query vector (RecallArgs refuses anything else).
--
-- [in scope] The same filter in every leg, so that all legs rank the same population: the
--   caller's namespaces, live, not sensitive unless asked (and theirs), and the optional row filters (the kinds
--   filter among them: curated memories, captured episodes, or both). Those sit
--   behind the one :row_filters gate: a generic plan cannot fold `$x IS NULL OR ...` away, and five
--   such clauses multiplied made it expect ~5 rows in scope and pick a sequential scan over the
--   HNSW index; behind the gate they count as one clause that holds for about half the rows.
--
-- [scope size] Two switches pick one of two ways to read a leg's candidates; the other way's
--   WHERE is a one-time false filter. :small_scope for the dense leg: a big scope walks the HNSW
--   index, a small one is scanned exactly. :text_by_namespace for the lexical tiers: a scope that
--   is most of the table reads the text index alone, as most of what it finds is in scope; any
--   other reads namespace by namespace [scoped text]: a query of common words matches thousands
--   of rows across the table, and reading them all to keep the scope's share costs more than
--   asking for the namespace's matches alone (app/recall/scope_sizes.py has the figures).
--
-- [per namespace] `unnest(<scope ids>) ... CROSS JOIN LATERAL (... WHERE m.namespace_id =
--   scope.namespace_id ... OFFSET 0)`: the in-scope memories read through one index lookup per
--   namespace. OFFSET 0 keeps each lookup apart: merged into one `namespace_id = ANY(...)` scan, a
--   generic plan cannot know how few rows that selects and reads the whole table.
--
-- [namespace count] A scope of many namespaces is never read [per namespace]: a thousand lookups,
--   each also checking the scope's thousand ids, cost a thousand times one, so a caller's
--   namespace count would multiply what a recall costs. Its text is read table-wide (its
--   :text_by_namespace is false, app/recall/scope_sizes.py: OR-ing a thousand namespace lexemes
--   makes the text index test each match against all of them); the dense exact scan, the switch
--   :few_namespaces, reads the whole scope in one scan of the scope vectors index by
--   `namespace_id = ANY(<scope ids>)` [scope bounds], and the graph leg seeds the nearest concepts
--   of the whole scope rather than those of each namespace. The rest of the graph leg reads a scope
--   of any size the same way: the concepts the query names in one lookup [concept names], and each
--   concept's namespace by its id [graph namespace].
--
-- [scope bounds] `m.namespace_id BETWEEN <the scope's first id> AND <its last>` beside `namespace_id
--   = ANY(<scope ids>)`: it selects nothing more, but a generic plan cannot know how few rows the
--   ANY selects (above), and in a table of few namespaces it reads the whole table; a range
--   between two values it does not know yet it takes for a small one, and reads the namespace
--   index. The index then positions on each of the scope's ids, as the ANY asks.
--
-- [scoped text] `memoria_scope_search(m.namespace_id, m.search_vector) @@
--   memoria_scope_query(scope.namespace_id, <query>)`: the query's words AND the namespace's own
--   lexeme, which only its memories carry, matched on the text index that holds that lexeme too
--   (memories_scope_search_idx, migration 0011). GIN walks the namespace's posting list and skips
--   through a common word's long one; the text index ANDed with the namespace index read every row
--   the word matches in the whole table first.
--
-- [by id] `CROSS JOIN LATERAL (SELECT ... FROM memories WHERE id = x.id OFFSET 0)`: one
--   primary-key lookup per id. OFFSET 0 keeps the subquery a lookup: a generic plan cannot know how
--   few ids the LIMITed legs yield and would hash the whole table instead.
--
-- [concept names] The concepts the query names, found in the concept name index
--   (concepts_name_namespace_idx, migration 0017: the name, then the namespace) within the scope's
--   first and last id [scope bounds], and by alias in the aliases index (almost no concept has
--   one), whatever the scope's namespace count. The (namespace_id, name) key needs the namespace
--   first: read through it, a scope of a thousand namespaces was a thousand lookups.
--
-- [graph namespace] `CROSS JOIN LATERAL {{ graph_namespace(c) }} s`: the graph leg weighs a concept
--   by figures of its namespace, read by primary key for each concept it reaches (seed, neighbour,
--   concept of a hit), which also keeps out a concept whose namespace is not in scope. Joined
--   instead with a list of the scope's namespaces, each concept passed over the whole list: a
--   generic plan takes the list for a few rows and loops over it.
--
-- [strongest edges] The graph walk's two hops read a concept's neighbours the same way: the
--   strongest edges at each end, in weight order from the (end, weight DESC) edge indexes, twice
--   the fanout so that skipping hub concepts still leaves enough, then the fanout non-hub
--   neighbours most strongly associated with it (`association`).
-- fragment: own_scope(m)
-- m's namespace is one of the caller's own in scope (not one shared with them): where their
-- sensitive memories may be (app/db/fragments.sql, `visible_to`).
m.namespace_id = ANY((SELECT own_ids FROM scope_ids)::bigint[])

-- fragment: in_scope(m)
-- [in scope]: the caller's namespaces, a memory they may see, and the row filters behind their gate.
m.namespace_id = ANY((SELECT ids FROM scope_ids)::bigint[])
AND {{ visible_to(m, {{ own_scope(m) }}, :include_sensitive::boolean) }}
AND (NOT :row_filters::boolean OR {{ row_filters(m) }})

-- fragment: scope_only(m)
-- [in scope] without the row filters: for the dense exact scan's branches, which gate them apart.
m.namespace_id = ANY((SELECT ids FROM scope_ids)::bigint[])
AND {{ visible_to(m, {{ own_scope(m) }}, :include_sensitive::boolean) }}

-- fragment: row_filters(m)
-- The optional row filters, each off when its parameter is NULL (the kinds filter among them:
-- curated memories, captured episodes, or both).
(
         (:category::text IS NULL OR m.category = :category)
     AND (:tags::text[] IS NULL
          OR CASE WHEN :tags_match_all::boolean THEN m.tags @> :tags ELSE m.tags && :tags END)
     AND (:created_since::timestamptz IS NULL OR m.created_at >= :created_since)
     AND (:kinds::text[] IS NULL OR m.kind = ANY(:kinds))
     AND (:created_until::timestamptz IS NULL OR m.created_at < :created_until))

-- fragment: scope_vectors(in_namespace)
-- The dense exact scan's rows: the scope's vectors (those `in_namespace` too) and their distance to
-- the query, in two branches behind the one :row_filters gate (see dense_exact).
(SELECT m.id, m.embedding <=> :query_vec::halfvec AS distance
 FROM memories m
 WHERE NOT :row_filters::boolean
   AND in_namespace
   AND m.embedding IS NOT NULL
   AND m.embedding_model = :embedding_model::text
   -- [in scope], but for the row filters (off in this branch)
   AND {{ scope_only(m) }}
 OFFSET 0)
UNION ALL
(SELECT m.id, m.embedding <=> :query_vec::halfvec AS distance
 FROM memories m
 WHERE :row_filters::boolean
   AND in_namespace
   AND m.embedding IS NOT NULL
   AND m.embedding_model = :embedding_model::text
   -- [in scope], the row filters on (this branch's gate)
   AND {{ scope_only(m) }}
   AND {{ row_filters(m) }}
 OFFSET 0)

-- fragment: lexical_tier(tsq, by_namespace)
-- A lexical tier's candidates, the memories in scope matching `tsq`, read in one of two ways
-- [scope size]: through the text index alone, or namespace by namespace [per namespace] [scoped
-- text] when `by_namespace` holds too.
(SELECT m.id, m.search_vector
 FROM memories m
 WHERE NOT :text_by_namespace::boolean
   AND m.search_vector @@ tsq
   -- [in scope]
   AND {{ in_scope(m) }}
 LIMIT :lexical_cap)
UNION ALL
(SELECT m.id, m.search_vector
 -- [per namespace]
 FROM unnest((SELECT ids FROM scope_ids)) AS scope (namespace_id)
 CROSS JOIN LATERAL (
     SELECT m.id, m.search_vector
     FROM memories m
     -- [scoped text]
     WHERE memoria_scope_search(m.namespace_id, m.search_vector)
           @@ memoria_scope_query(scope.namespace_id, tsq)
       -- [in scope]
       AND {{ in_scope(m) }}
     OFFSET 0
 ) m
 WHERE :text_by_namespace::boolean
   AND by_namespace
 LIMIT :lexical_cap)

-- fragment: or_rank(vec, broad_q)
-- How well `vec` matches an OR of the query's lexemes. ts_rank of an OR is the mean of each
-- lexeme's own ts_rank (its occurrences, by field weight, saturating); with :lexical_idf each
-- lexeme's counts by its rarity in the scope [term rarity]: the sum of idf x its ts_rank (in a
-- scope too small for rarity to mean anything, `lexical_idf` is empty and the mean stands).
CASE WHEN :lexical_idf::boolean AND EXISTS (SELECT 1 FROM lexical_idf)
     THEN (SELECT coalesce(sum(i.idf * ts_rank(vec, i.term)), 0)::real FROM lexical_idf i)
     ELSE ts_rank(vec, broad_q)
END

-- fragment: graph_namespace(c)
-- [graph namespace] What the graph leg weighs concept c by, from its namespace: the namespace's
-- linked memories, and the doc_freq above which a concept of it is a hub, or too common to stand
-- for a first-stage hit. No row when the namespace is out of scope, so neither is c. One primary-key
-- lookup, kept apart by OFFSET 0 as [by id] explains; the scope test names c's column, not the
-- namespace's, so that it gates the lookup instead of joining its index condition, where the
-- index would sort the scope's ids again for every concept.
(SELECT n.graph_memories,
        greatest(:graph_hub_min_doc_freq::float8, :graph_hub_fraction::float8 * n.graph_memories)
            AS hub_ceiling,
        greatest(2, :graph_feedback_max_fraction::float8 * n.graph_memories) AS feedback_ceiling
 FROM namespaces n
 WHERE n.id = c.namespace_id
   AND c.namespace_id = ANY((SELECT ids FROM scope_ids)::bigint[])
 OFFSET 0)

-- name: recall
WITH RECURSIVE
-- The scope, resolved here rather than by a round trip before: every namespace the caller owns
-- (:own_names NULL), or the ones named, their own by name and those shared with them by the address
-- `@owner/name`. Read at every recall, so a share revoked a moment ago is out of scope at once. A
-- named namespace that is neither yields no row: the caller compares :scope_found with what it
-- named. `label` is what a hit reports as its namespace.
in_scope AS MATERIALIZED (
    SELECT n.id, n.name AS label, true AS owned
    FROM namespaces n
    WHERE n.user_id = :user_id::bigint
      AND (:own_names::text[] IS NULL OR n.name = ANY(:own_names::text[]))
    UNION ALL
    SELECT shared.id, '@' || owner.name || '/' || shared.name, false
    FROM namespace_shares share
    JOIN namespaces shared ON shared.id = share.namespace_id
    JOIN users owner ON owner.id = shared.user_id
    WHERE share.grantee_id = :user_id::bigint
      AND (owner.name, shared.name) IN (SELECT * FROM unnest(:share_owners::text[], :share_names::text[]))
),
-- In id order: the per-namespace reads cap their candidates in scope order, so one scope always
-- reads the same way. The legs read it as `ANY((SELECT ids FROM scope_ids)::bigint[])`: the cast
-- makes ANY take the one array (bare, ANY would compare with each row of a subquery). The first
-- and last id bound it [scope bounds].
scope_ids AS (
    SELECT coalesce(array_agg(id ORDER BY id), '{}') AS ids,
           coalesce(array_agg(id ORDER BY id) FILTER (WHERE owned), '{}') AS own_ids,
           min(id) AS first_id, max(id) AS last_id
    FROM in_scope
),
-- The query three ways: strict (all words, websearch syntax); broad (any lexeme, plus expanded
-- terms), which ranks every OR match; and rare, the broad lexemes the planner statistics do not
-- call common (NULL when none is left; the same as broad when none is common).
lexical_query AS (
    SELECT websearch_to_tsquery('english', :query) AS strict_q,
           (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery FROM unnest(l.lexemes) lexeme)
               AS broad_q,
           (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery FROM unnest(l.lexemes) lexeme
            WHERE lexeme <> ALL(:common_lexemes::text[])) AS rare_q,
           l.lexemes && :common_lexemes::text[] AS has_common,
           l.lexemes
    FROM (
        SELECT tsvector_to_array(
                   to_tsvector('english', :query || ' ' || coalesce(:expanded_query::text, ''))
               ) AS lexemes
    ) l
),
-- [term rarity] Each query lexeme's rarity in the scope, when :lexical_idf: BM25's inverse document
-- frequency ln(1 + (N - df + 0.5) / (df + 0.5)), N the scope's memories and df those holding the
-- lexeme, read from the counts the counting job keeps (app/recall/term_counts.py), never from
-- `memories`: one primary-key lookup per lexeme within the scope's first and last id [scope
-- bounds], and one per namespace of the scope. None in a scope of fewer than
-- :lexical_idf_min_memories memories, whose frequencies say little.
lexical_idf AS MATERIALIZED (
    SELECT quote_literal(t.lexeme)::tsquery AS term,
           ln(1 + (greatest(n.memories - t.memories, 0) + 0.5) / (t.memories + 0.5)) AS idf
    FROM (
        SELECT coalesce(sum(nt.memories), 0)::float8 AS memories
        FROM namespace_terms nt
        WHERE nt.namespace_id = ANY((SELECT ids FROM scope_ids)::bigint[])
    ) n,
    lexical_query q
    CROSS JOIN LATERAL unnest(q.lexemes) AS l (lexeme)
    CROSS JOIN LATERAL (
        SELECT l.lexeme, coalesce(sum(c.memories), 0)::float8 AS memories
        FROM term_counts c
        WHERE c.lexeme = l.lexeme
          AND c.namespace_id BETWEEN (SELECT first_id FROM scope_ids) AND (SELECT last_id FROM scope_ids)
          AND c.namespace_id = ANY((SELECT ids FROM scope_ids)::bigint[])
    ) t
    WHERE :lexical_idf::boolean
      AND n.memories >= :lexical_idf_min_memories::integer
),
-- Three tiers, each broadening only when the ones before came back short of the leg depth, and
-- each ranking at most :lexical_cap candidates, so a query full of common words cannot make this
-- leg rank thousands of rows. Each tier reads its candidates in one of two ways [scope size].
lexical_strict AS (
    SELECT c.id, ts_rank_cd(c.search_vector, q.strict_q) AS score
    FROM lexical_query q,
         -- by namespace only with words left: a query of stop words ANDed with the namespace would match all
         LATERAL (
             {{ lexical_tier(q.strict_q, numnode(q.strict_q) > 0) }}
         ) c
    WHERE :w_lexical::float8 > 0  -- [leg switch]
    ORDER BY score DESC, c.id
    LIMIT :leg_depth
),
-- Any of the rarer lexemes: a question's "like" or "would" would fetch a fifth of the table and
-- says little about relevance. ts_rank (term frequency, all lexemes) separates OR matches better
-- than cover density, which rewards several terms close together. With :lexical_idf each lexeme
-- counts by its rarity [term rarity] instead of all alike.
lexical_rare AS (
    SELECT c.id, {{ or_rank(c.search_vector, q.broad_q) }} AS score
    FROM lexical_query q,
         LATERAL (
             {{ lexical_tier(q.rare_q, true) }}
         ) c
    WHERE :w_lexical::float8 > 0  -- [leg switch]
      AND q.rare_q IS NOT NULL
      AND (SELECT count(*) FROM lexical_strict) < :leg_depth
    ORDER BY score DESC, c.id
    LIMIT :leg_depth
),
-- Any lexeme at all, common ones included (when none is common, the rare tier already was this).
lexical_any AS (
    SELECT c.id, {{ or_rank(c.search_vector, q.broad_q) }} AS score
    FROM lexical_query q,
         LATERAL (
             {{ lexical_tier(q.broad_q, true) }}
         ) c
    WHERE :w_lexical::float8 > 0  -- [leg switch]
      AND (q.has_common OR q.rare_q IS NULL)
      AND (SELECT count(*) FROM lexical_strict) + (SELECT count(*) FROM lexical_rare) < :leg_depth
    ORDER BY score DESC, c.id
    LIMIT :leg_depth
),
lexical AS (
    SELECT id, score, row_number() OVER (ORDER BY tier, score DESC, id) AS rank
    FROM (
        SELECT DISTINCT ON (id) id, score, tier
        FROM (
            SELECT id, score, 0 AS tier FROM lexical_strict
            UNION ALL SELECT id, score, 1 FROM lexical_rare
            UNION ALL SELECT id, score, 2 FROM lexical_any
        ) matched
        ORDER BY id, tier
    ) tiers
    ORDER BY rank
    LIMIT :leg_depth
),
-- Approximate nearest neighbours on the HNSW index (iterative scan keeps filtered results full).
-- Small scopes skip it [scope size]: walking the HNSW graph past thousands of other namespaces'
-- rows costs more than scanning the scope.
dense_ann AS (
    SELECT m.id, m.embedding <=> :query_vec::halfvec AS distance
    FROM memories m
    WHERE :w_dense::float8 > 0  -- [leg switch]
      AND NOT :small_scope::boolean
      AND m.embedding IS NOT NULL
      AND m.embedding_model = :embedding_model::text
      -- [in scope]
      AND {{ in_scope(m) }}
    ORDER BY m.embedding <=> :query_vec::halfvec
    LIMIT :leg_depth
),
-- Exact scan of the scope: for small scopes, or when the index scan came back short although the
-- scope may hold more (selective filters, or a scope that is a sliver of a big table). `+ 0` keeps
-- this ORDER BY off the HNSW index. Without row filters it reads the scope's vectors index alone
-- (memories_scope_vectors_idx, an index-only scan: the scope's vectors side by side instead of one
-- table page per memory, which is what a big table's small scope pays for). A generic plan can
-- only scan an index alone for a query that names no other column, hence two branches behind the
-- one :row_filters gate, the second with the row filters and reading the table.
dense_exact AS (
    SELECT m.id, m.distance
    FROM (
        SELECT m.id, m.distance
        -- [per namespace]
        FROM unnest((SELECT ids FROM scope_ids)) AS scope (namespace_id)
        CROSS JOIN LATERAL (
            {{ scope_vectors(m.namespace_id = scope.namespace_id) }}
        ) m
        WHERE :few_namespaces::boolean  -- [namespace count]
        UNION ALL
        -- every namespace of the scope in one scan [namespace count], between the scope's first and
        -- last id [scope bounds]
        SELECT m.id, m.distance
        FROM (
            {{ scope_vectors(m.namespace_id BETWEEN (SELECT first_id FROM scope_ids) AND (SELECT last_id FROM scope_ids)) }}
        ) m
        WHERE NOT :few_namespaces::boolean
    ) m
    WHERE (:small_scope::boolean OR (SELECT count(*) FROM dense_ann) < :leg_depth)
      AND :w_dense::float8 > 0  -- [leg switch]
    ORDER BY m.distance + 0
    LIMIT :leg_depth
),
dense AS (
    SELECT id, distance, row_number() OVER (ORDER BY distance, id) AS rank
    FROM (
        SELECT id, distance FROM dense_exact
        UNION ALL
        SELECT id, distance FROM dense_ann WHERE NOT EXISTS (SELECT 1 FROM dense_exact)
    ) candidates
),
-- Concept graph: activate the rare concepts of the best lexical+dense hits and the concepts the query
-- names (and the nearest concept embeddings), walk co-occurrence edges from the latter with decay,
-- never through hubs, and score the memories that mention what was reached, rare concepts counting
-- more than common ones.
--
-- First stage: the lexical and dense legs fused as `fused` fuses them by rank. The graph leg starts
-- from the best of these hits (pseudo-relevance feedback): what they are about re-ranks them by what
-- they share and leads to memories that share no word with the query.
first_stage AS (
    SELECT id, sum(score) AS score, max(sum(score)) OVER () AS best
    FROM (
        SELECT id, :w_lexical::float8 / (:rrf_k + rank) AS score FROM lexical
        UNION ALL
        SELECT id, :w_dense::float8 / (:rrf_k + rank) FROM dense
    ) legs
    WHERE :w_graph::float8 > 0  -- [leg switch]
    GROUP BY id
    ORDER BY score DESC, id
    LIMIT :graph_feedback_hits
),
-- The concepts of the first-stage hits, each activated by the hits that mention it (a hit counts by
-- its first-stage score relative to the best). Only rare concepts: one in more than
-- :graph_feedback_max_fraction of the namespace links a hit to too much; one in a single memory
-- links it to nothing.
graph_feedback AS (
    SELECT concept_id, activation, path, specificity
    FROM (
        SELECT c.id AS concept_id,
               :graph_feedback_weight::float8 * sum(fs.score / fs.best) AS activation,
               'hits > ' || c.display_name AS path,
               ln(1 + s.graph_memories::float8 / greatest(c.doc_freq, 1)) AS specificity
        FROM first_stage fs
        JOIN memory_concepts mc ON mc.memory_id = fs.id
        JOIN concepts c ON c.id = mc.concept_id
        CROSS JOIN LATERAL {{ graph_namespace(c) }} s  -- [graph namespace]
        WHERE c.doc_freq >= 2 AND c.doc_freq <= s.feedback_ceiling
        GROUP BY c.id, c.display_name, c.doc_freq, s.graph_memories
    ) concepts_of_hits
    ORDER BY activation * specificity DESC, concept_id
    LIMIT :graph_feedback_concepts
),
-- The concepts the query names [concept names], rarest first; then, when :graph_seed_neighbors is
-- above 0 (concept embeddings on and a query vector), the concepts nearest to the query.
graph_seeds AS (
    (SELECT c.id AS concept_id, 1.0::float8 AS activation, c.display_name AS path,
            ln(1 + s.graph_memories::float8 / greatest(c.doc_freq, 1)) AS specificity, c.doc_freq
     FROM (
         -- [concept names] by name, between the scope's first and last id [scope bounds]; the
         -- namespace lookup below keeps the scope's own
         SELECT c.id, c.namespace_id, c.display_name, c.doc_freq
         FROM concepts c
         WHERE c.name = ANY(:seed_names::text[])
           AND c.namespace_id BETWEEN (SELECT first_id FROM scope_ids) AND (SELECT last_id FROM scope_ids)
         UNION
         -- ... and by alias
         SELECT c.id, c.namespace_id, c.display_name, c.doc_freq
         FROM concepts c
         WHERE c.aliases && :seed_names::text[]
     ) c
     CROSS JOIN LATERAL {{ graph_namespace(c) }} s  -- [graph namespace]
     WHERE :w_graph::float8 > 0  -- [leg switch]
       AND c.doc_freq <= s.hub_ceiling
     ORDER BY c.doc_freq, c.id
     LIMIT :graph_max_seeds)
    UNION ALL
    -- a scope of few namespaces: the nearest concepts of each [per namespace]
    SELECT near.id, near.similarity, near.display_name,
           ln(1 + s.graph_memories::float8 / greatest(near.doc_freq, 1)), near.doc_freq
    FROM unnest((SELECT ids FROM scope_ids)) AS scope (namespace_id)
    CROSS JOIN LATERAL (
        SELECT c.id, c.namespace_id, c.display_name, c.doc_freq,
               1 - (c.embedding <=> :query_vec::halfvec) AS similarity
        FROM concepts c
        WHERE c.namespace_id = scope.namespace_id
          AND c.embedding IS NOT NULL
        ORDER BY c.embedding <=> :query_vec::halfvec
        LIMIT :graph_seed_neighbors
    ) near
    CROSS JOIN LATERAL {{ graph_namespace(near) }} s  -- [graph namespace]
    WHERE :w_graph::float8 > 0  -- [leg switch]
      AND :few_namespaces::boolean  -- [namespace count]
      AND near.similarity >= :graph_seed_min_similarity
      AND near.doc_freq <= s.hub_ceiling
    UNION ALL
    -- a scope of many namespaces: the nearest concepts of all of them together [namespace count]
    SELECT near.id, near.similarity, near.display_name,
           ln(1 + s.graph_memories::float8 / greatest(near.doc_freq, 1)), near.doc_freq
    FROM (
        SELECT c.id, c.namespace_id, c.display_name, c.doc_freq,
               1 - (c.embedding <=> :query_vec::halfvec) AS similarity
        FROM concepts c
        WHERE NOT :few_namespaces::boolean
          AND c.namespace_id = ANY((SELECT ids FROM scope_ids)::bigint[])
          AND c.embedding IS NOT NULL
        ORDER BY c.embedding <=> :query_vec::halfvec
        LIMIT :graph_seed_neighbors
    ) near
    CROSS JOIN LATERAL {{ graph_namespace(near) }} s  -- [graph namespace]
    WHERE :w_graph::float8 > 0  -- [leg switch]
      AND near.similarity >= :graph_seed_min_similarity
      AND near.doc_freq <= s.hub_ceiling
),
-- At most two hops, each bounded: every seed follows its strongest edges, and only the most
-- activated first-hop concepts go on, so the walk reads O(seeds + fanout) edge lists, never fanout².
graph_hop1 AS (
    SELECT nb.id AS concept_id, f.activation * :graph_hop_decay::float8 * nb.strength AS activation,
           f.path || ' > ' || nb.display_name AS path, nb.specificity, nb.doc_freq
    FROM graph_seeds f
    CROSS JOIN LATERAL (
        -- [strongest edges] of f
        SELECT c.id, c.display_name, {{ association(e.weight, f.doc_freq, c.doc_freq) }} AS strength,
               ln(1 + gs.graph_memories::float8 / greatest(c.doc_freq, 1)) AS specificity, c.doc_freq
        FROM (
            (SELECT target_id AS other, weight FROM concept_edges
             WHERE source_id = f.concept_id
             ORDER BY weight DESC LIMIT 2 * :graph_fanout)
            UNION ALL
            (SELECT source_id, weight FROM concept_edges
             WHERE target_id = f.concept_id
             ORDER BY weight DESC LIMIT 2 * :graph_fanout)
        ) e
        -- [by id]: ordered by association, a join would read every concept of a small table
        CROSS JOIN LATERAL (
            SELECT id, namespace_id, display_name, doc_freq FROM concepts WHERE id = e.other OFFSET 0
        ) c
        CROSS JOIN LATERAL {{ graph_namespace(c) }} gs  -- [graph namespace]
        WHERE c.doc_freq <= gs.hub_ceiling
        ORDER BY strength DESC, e.weight DESC, c.id
        LIMIT :graph_fanout
    ) nb
    WHERE :graph_max_hops >= 1
),
graph_hop2 AS (
    SELECT nb.id AS concept_id, h.activation * :graph_hop_decay::float8 * nb.strength AS activation,
           h.path || ' > ' || nb.display_name AS path, nb.specificity, nb.doc_freq
    FROM (
        SELECT concept_id, activation, path, doc_freq FROM graph_hop1
        ORDER BY activation DESC, concept_id
        LIMIT :graph_fanout
    ) h
    CROSS JOIN LATERAL (
        -- [strongest edges] of h
        SELECT c.id, c.display_name, {{ association(e.weight, h.doc_freq, c.doc_freq) }} AS strength,
               ln(1 + gs.graph_memories::float8 / greatest(c.doc_freq, 1)) AS specificity, c.doc_freq
        FROM (
            (SELECT target_id AS other, weight FROM concept_edges
             WHERE source_id = h.concept_id
             ORDER BY weight DESC LIMIT 2 * :graph_fanout)
            UNION ALL
            (SELECT source_id, weight FROM concept_edges
             WHERE target_id = h.concept_id
             ORDER BY weight DESC LIMIT 2 * :graph_fanout)
        ) e
        -- [by id]: ordered by association, a join would read every concept of a small table
        CROSS JOIN LATERAL (
            SELECT id, namespace_id, display_name, doc_freq FROM concepts WHERE id = e.other OFFSET 0
        ) c
        CROSS JOIN LATERAL {{ graph_namespace(c) }} gs  -- [graph namespace]
        WHERE c.doc_freq <= gs.hub_ceiling
        ORDER BY strength DESC, e.weight DESC, c.id
        LIMIT :graph_fanout
    ) nb
    WHERE :graph_max_hops >= 2
),
-- The walk's most activated concepts.
graph_concepts AS (
    SELECT concept_id, activation, path, specificity
    FROM (
        SELECT DISTINCT ON (concept_id) concept_id, activation, path, specificity
        FROM (
            SELECT concept_id, activation, path, specificity FROM graph_seeds
            UNION ALL SELECT concept_id, activation, path, specificity FROM graph_hop1
            UNION ALL SELECT concept_id, activation, path, specificity FROM graph_hop2
        ) reached
        ORDER BY concept_id, activation DESC
    ) best
    ORDER BY activation DESC, concept_id
    LIMIT :graph_max_concepts
),
-- The walk's concepts and the first-stage hits' concepts, numbered: a memory's explain path is that
-- of its best concept.
graph_reached AS (
    SELECT concept_id, activation, path, specificity,
           row_number() OVER (ORDER BY activation * specificity DESC, concept_id) AS concept_rank
    FROM (
        SELECT DISTINCT ON (concept_id) concept_id, activation, path, specificity
        FROM (
            SELECT concept_id, activation, path, specificity FROM graph_concepts
            UNION ALL SELECT concept_id, activation, path, specificity FROM graph_feedback
        ) reached
        ORDER BY concept_id, activation DESC
    ) best
),
-- Memories score the activation of the concepts they mention, rare concepts (ln(1 + N/df))
-- counting more than common ones.
graph_scored AS (
    SELECT mc.memory_id AS id, sum(gc.activation * gc.specificity) AS score,
           min(gc.concept_rank) AS best_concept
    FROM graph_reached gc
    CROSS JOIN LATERAL (
        SELECT l.memory_id FROM memory_concepts l
        WHERE l.concept_id = gc.concept_id
        ORDER BY l.memory_id DESC
        LIMIT :graph_memories_per_concept
    ) mc
    -- Only live, non-sensitive memories are ever linked (delete and PATCH unlink in their own
    -- transaction), so memory rows are read only when the request filters on their columns.
    WHERE NOT :row_filters::boolean
       OR EXISTS (
              SELECT 1 FROM memories m
              WHERE m.id = mc.memory_id
                -- [in scope]
                AND {{ in_scope(m) }})
    GROUP BY mc.memory_id
    ORDER BY score DESC, mc.memory_id
    LIMIT :leg_depth
),
graph AS (
    SELECT g.id, g.score, gc.path, row_number() OVER (ORDER BY g.score DESC, g.id) AS rank
    FROM graph_scored g
    JOIN graph_reached gc ON gc.concept_rank = g.best_concept
),
fused AS (
    SELECT id,
           lexical.rank AS lexical_rank,
           lexical.score AS lexical_score,
           dense.rank AS dense_rank,
           dense.distance AS dense_distance,
           graph.rank AS graph_rank,
           graph.path AS graph_path,
           CASE WHEN :score_fusion::boolean THEN
               coalesce(:w_lexical::float8 * lexical.score / nullif(max(lexical.score) OVER (), 0), 0)
             + coalesce(:w_dense::float8 * (max(dense.distance) OVER () - dense.distance)
                        / nullif(max(dense.distance) OVER () - min(dense.distance) OVER (), 0), 0)
             + coalesce(:w_graph::float8 * graph.score / nullif(max(graph.score) OVER (), 0), 0)
           ELSE
               coalesce(:w_lexical::float8 / (:rrf_k + lexical.rank), 0)
             + coalesce(:w_dense::float8 / (:rrf_k + dense.rank), 0)
             + coalesce(:w_graph::float8 / (:rrf_k + graph.rank), 0)
           END AS fused_score
    FROM lexical
    FULL OUTER JOIN dense USING (id)
    FULL OUTER JOIN graph USING (id)
),
-- A superseded hit stands for the newest version of what it says: the memories that supersede
-- it, link by link, while they are live (app/links). The legs rank every version, so a question
-- worded as the old version was still finds the new one, at the old one's rank. Each step reads
-- the links by their target [by id], a probe on an index that holds superseded memories only;
-- with :include_superseded no step runs and every hit stands for itself.
successors AS (
    SELECT f.id AS matched_id, f.id, 0 AS depth, ARRAY[]::bigint[] AS chain
    FROM fused f
    UNION ALL
    SELECT s.matched_id, newer.source_id, s.depth + 1, s.chain || s.id
    FROM successors s
    CROSS JOIN LATERAL (
        SELECT l.source_id
        FROM memory_links l
        JOIN memories m ON m.id = l.source_id
        WHERE l.target_id = s.id AND l.kind = 'supersedes'
          AND {{ visible_to(m, {{ own_scope(m) }}, :include_sensitive::boolean) }}
        OFFSET 0
    ) newer
    WHERE NOT :include_superseded
      AND s.depth < 16
),
-- Each hit's newest version the caller may see that holds at :as_of (now when NULL); the hit
-- itself when none does (the ranking below then keeps it only if it holds itself).
resolved AS (
    SELECT DISTINCT ON (s.matched_id) s.matched_id, s.id, s.chain
    FROM successors s
    WHERE s.depth = 0
       OR EXISTS (
              SELECT 1 FROM memories m
              WHERE m.id = s.id
                AND {{ visible_to(m, {{ own_scope(m) }}, :include_sensitive::boolean) }}
                AND {{ current(m, :as_of::timestamptz) }})
    ORDER BY s.matched_id, s.depth DESC
),
-- Hits standing for the same memory count once, with the best fused score among them (the
-- memory's own, or that of an older version it supersedes) and that hit's leg ranks.
merged AS (
    SELECT DISTINCT ON (r.id)
           r.id, r.matched_id, r.chain, f.lexical_rank, f.lexical_score, f.dense_rank,
           f.dense_distance, f.graph_rank, f.graph_path, f.fused_score
    FROM resolved r
    JOIN fused f ON f.id = r.matched_id
    ORDER BY r.id, f.fused_score DESC, r.matched_id
),
-- The importance prior scales a fused score by 1 - p + p * importance, at least 1 - p (importance
-- lies in [0, 1]), and the episode weight an episode's by e (curated memories come first at equal
-- relevance): :limit memories scoring F or more before them score (1 - p) * min(1, e) * F or more
-- after, so a memory scoring less than that before can end in no top :limit, and its row is never
-- read. F is the :limit-th best score among the lexical and dense hits, which the legs read live
-- and visible (a graph hit may yet be dropped below); 0 when there are fewer. A hit whose own
-- validity ended (`valid_to` past, no successor) is dropped below too: the answer can be that
-- many short of :limit, as it can for the graph hits.
fused_floor AS (
    SELECT (1 - :importance_prior::float8) * least(1, :episode_weight::float8) * min(fused_score) AS floor
    FROM (
        SELECT fused_score FROM merged
        WHERE lexical_rank IS NOT NULL OR dense_rank IS NOT NULL
        ORDER BY fused_score DESC
        LIMIT :limit
    ) best
    HAVING count(*) = :limit
),
ranked AS (
    SELECT f.*,
           f.fused_score * (1 - :importance_prior::float8 + :importance_prior::float8 * m.importance)
               * CASE WHEN m.kind = 'episode' THEN :episode_weight ELSE 1 END
               AS final_score,
           m.importance, m.created_at
    FROM merged f
    -- [by id] The legs read only live rows the caller may see, except the graph leg, which trusts
    -- its links (graph_scored): a memory deleted or made sensitive without being unlinked (by hand,
    -- in SQL) is dropped here, on the row this lookup reads anyway, and never returned. So is a
    -- memory that does not hold at :as_of, unless versions no longer current are asked for.
    CROSS JOIN LATERAL (
        SELECT importance, created_at, kind FROM memories m
        WHERE id = f.id
          AND {{ visible_to(m, {{ own_scope(m) }}, :include_sensitive::boolean) }}
          AND (:include_superseded OR {{ current(m, :as_of) }})
        OFFSET 0
    ) m
    WHERE f.fused_score >= coalesce((SELECT floor FROM fused_floor), 0)
    ORDER BY final_score DESC, f.id
    LIMIT :limit
),
-- A problem's fixes come along with it: the memories a ranked hit is `resolved-by` that the
-- answer does not hold already, placed right after it (its score, ordered after it).
companions AS (
    SELECT DISTINCT ON (fix.id) fix.id, r.id AS problem_id, r.final_score, fix.importance, fix.created_at
    FROM ranked r
    CROSS JOIN LATERAL (
        SELECT m.id, m.importance, m.created_at
        FROM memory_links l
        JOIN memories m ON m.id = l.target_id
        WHERE l.source_id = r.id AND l.kind = 'resolved-by'
          AND {{ visible_to(m, {{ own_scope(m) }}, :include_sensitive::boolean) }}
          AND (:include_superseded OR {{ current(m, :as_of) }})
        ORDER BY m.id
        LIMIT 3
    ) fix
    WHERE fix.id NOT IN (SELECT id FROM ranked)
    ORDER BY fix.id, r.final_score DESC
),
answer AS (
    SELECT id, matched_id, chain, lexical_rank, lexical_score, dense_rank, dense_distance, graph_rank,
           graph_path, fused_score, final_score, importance, created_at, NULL::bigint AS problem_id
    FROM ranked
    UNION ALL
    SELECT id, id, ARRAY[]::bigint[], NULL, NULL, NULL, NULL, NULL, NULL, 0, final_score, importance,
           created_at, problem_id
    FROM companions
)
-- A hit's namespace is named as the caller calls it (`in_scope.label`): its name when it is theirs,
-- `@owner/name` when it is shared with them. Its id is the public one (the identity, a counter
-- shared by every tenant, stays internal: it still breaks ties above).
SELECT m.public_id AS id,
       (SELECT s.label FROM in_scope s WHERE s.id = m.namespace_id) AS namespace,
       m.content, m.category, m.tags, m.importance, m.is_sensitive,
       m.created_at, m.kind, m.expires_at, r.id AS memory_id, r.lexical_rank, r.lexical_score, r.dense_rank, r.dense_distance,
       r.graph_rank, r.graph_path, r.fused_score, r.final_score,
       (SELECT count(*) FROM in_scope) AS scope_found,
       m.valid_from, m.valid_to,
       -- the versions this hit stands for, oldest link first (the hit the legs found first)
       (SELECT array_agg(older.public_id ORDER BY c.n)
        FROM unnest(r.chain) WITH ORDINALITY AS c (id, n)
        JOIN memories older ON older.id = c.id) AS replaces,
       (SELECT newer.public_id
        FROM memory_links l JOIN memories newer ON newer.id = l.source_id
        WHERE l.target_id = r.id AND l.kind = 'supersedes'
          AND {{ visible_to(newer, {{ own_scope(newer) }}, :include_sensitive::boolean) }}) AS superseded_by,
       (SELECT problem.public_id FROM memories problem WHERE problem.id = r.problem_id) AS came_with
FROM answer r
-- [by id]
CROSS JOIN LATERAL (SELECT * FROM memories WHERE id = r.id OFFSET 0) m
ORDER BY
    CASE WHEN :sort::text = 'importance' THEN r.importance END DESC NULLS LAST,
    CASE WHEN :sort::text = 'recency' THEN r.created_at END DESC NULLS LAST,
    r.final_score DESC,
    r.problem_id IS NOT NULL,
    r.id
