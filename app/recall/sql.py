"""The recall statement: every leg, the fusion and the ordering in ONE reviewed SQL statement.

Legs are named CTEs that each yield (id, rank); fusion is weighted Reciprocal Rank Fusion,
`sum(w_leg / (k + rank_leg))`, where a leg that did not return a memory contributes 0. A leg whose
weight is 0 is not executed at all (its WHERE holds a constant false: a one-time filter), which is
how ablations run the very same statement. The third leg, `graph`, walks the concept graph at most two
hops out, each hop bounded.

Placeholders are `{name}`; `compile_recall_sql` turns them into asyncpg's `$n`.
"""

from __future__ import annotations

RECALL_PARAMS: tuple[str, ...] = (
    "namespace_ids",  # bigint[]: the caller's namespaces in scope (resolved, never user text)
    "query",  # text: the user's query, parsed by websearch_to_tsquery (never a syntax error)
    "expanded_query",  # text: extra lexical terms, OR-ed in when broadening
    "query_vec",  # halfvec: query embedding, NULL when the embedder is unavailable
    "embedding_model",  # text: the model of query_vec; vectors of other models are not comparable
    "category",
    "tags",
    "tags_match_all",
    "created_since",
    "created_until",
    "include_sensitive",
    "leg_depth",
    "rrf_k",
    "w_lexical",
    "w_dense",
    "importance_prior",
    "lexical_cap",
    "limit",
    "sort",
    "w_graph",
    "seed_names",  # text[]: concept keys the query mentions (same extractor as on store)
    "graph_max_hops",
    "graph_hop_decay",
    "graph_fanout",
    "graph_hub_fraction",
    "graph_hub_min_doc_freq",
    "graph_seed_neighbors",
    "graph_seed_min_similarity",
    "small_scope",  # boolean: scan the scope exactly (dense) and through its namespace index (lexical)
    "graph_max_seeds",
    "graph_max_concepts",
    "graph_memories_per_concept",
    "row_filters",  # boolean: category, tags or created_* filters are set (must be true when any is)
    "common_lexemes",  # text[]: lexemes too common to pick OR-tier candidates (from pg_stats, cached)
)

# The filter every leg applies, so all legs rank the same population. The optional row filters sit
# behind one `row_filters` gate: a cached generic plan cannot fold `$x IS NULL OR ...` away, and five
# such clauses multiplied made it expect ~5 rows in scope and pick a sequential scan over the HNSW
# index; behind the gate they count as one clause that holds for about half the rows.
_IN_SCOPE = """
          m.namespace_id = ANY({namespace_ids}::bigint[])
      AND m.deleted_at IS NULL
      AND (m.is_sensitive = false OR {include_sensitive}::boolean)
      AND (NOT {row_filters}::boolean OR (
               ({category}::text IS NULL OR m.category = {category})
           AND ({tags}::text[] IS NULL
                OR CASE WHEN {tags_match_all}::boolean THEN m.tags @> {tags} ELSE m.tags && {tags} END)
           AND ({created_since}::timestamptz IS NULL OR m.created_at >= {created_since})
           AND ({created_until}::timestamptz IS NULL OR m.created_at < {created_until})))"""


def _each_namespace(columns: str, condition: str) -> str:
    """`FROM` items yielding `m`: the in-scope memories meeting `condition`, read through one index
    lookup per namespace. OFFSET 0 keeps each lookup apart: merged into one `namespace_id = ANY(...)`
    scan, a cached generic plan cannot know how few rows that selects and reads the whole table."""
    return f"""unnest({{namespace_ids}}::bigint[]) AS scope (namespace_id)
              CROSS JOIN LATERAL (
                  SELECT {columns}
                  FROM memories m
                  WHERE m.namespace_id = scope.namespace_id
                    AND {condition}
                    AND {_IN_SCOPE}
                  OFFSET 0
              ) m"""


def _matching(tsquery: str) -> str:
    """At most `lexical_cap` in-scope memories matching `tsquery` (a column of `lexical_query q`).

    A big scope reads the text index alone: most of what it matches is in scope. A small scope
    intersects it with each namespace's index: a query of common words matches thousands of rows
    across the table, and reading them all to keep a small scope's few cost 15-17 ms, while the
    intersection costs 10 ms on a 50k-memory scope.
    """
    return f"""
             (SELECT m.id, m.search_vector
              FROM memories m
              WHERE NOT {{small_scope}}::boolean
                AND m.search_vector @@ q.{tsquery}
                AND {_IN_SCOPE}
              LIMIT {{lexical_cap}})
             UNION ALL
             (SELECT m.id, m.search_vector
              FROM {_each_namespace("m.id, m.search_vector", f"m.search_vector @@ q.{tsquery}")}
              WHERE {{small_scope}}::boolean
              LIMIT {{lexical_cap}})
         """


def _neighbours(frontier: str) -> str:
    """The strongest non-hub neighbours of `frontier`.concept_id, read in weight order from the
    (end, weight) indexes on both edge ends; twice the fanout so that skipping hubs leaves enough."""
    return f"""
        SELECT c.id, c.display_name, e.weight / (e.weight + 1.0) AS strength,
               ln(1 + gs.graph_memories::float8 / greatest(c.doc_freq, 1)) AS specificity
        FROM (
            (SELECT target_id AS other, weight FROM concept_edges
             WHERE source_id = {frontier}.concept_id AND valid_to IS NULL
             ORDER BY weight DESC LIMIT 2 * {{graph_fanout}})
            UNION ALL
            (SELECT source_id, weight FROM concept_edges
             WHERE target_id = {frontier}.concept_id AND valid_to IS NULL
             ORDER BY weight DESC LIMIT 2 * {{graph_fanout}})
        ) e
        JOIN concepts c ON c.id = e.other
        JOIN graph_scope gs ON gs.namespace_id = c.namespace_id
        WHERE c.doc_freq <= gs.hub_ceiling
        ORDER BY e.weight DESC, c.id
        LIMIT {{graph_fanout}}
    """


# The exact dense scan's rows: embedded by the query's model, with their distance to the query.
_EMBEDDED_IN_SCOPE = _each_namespace(
    "m.id, m.embedding <=> {query_vec}::halfvec AS distance",
    "m.embedding IS NOT NULL AND m.embedding_model = {embedding_model}::text",
)

RECALL_SQL = f"""
WITH
-- The query three ways: strict (all words, websearch syntax); broad (any lexeme, plus expanded
-- terms), which ranks every OR match; and rare, the broad lexemes the planner statistics do not
-- call common (NULL when none is left; the same as broad when none is common).
lexical_query AS (
    SELECT websearch_to_tsquery('english', {{query}}) AS strict_q,
           (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery FROM unnest(l.lexemes) lexeme)
               AS broad_q,
           (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery FROM unnest(l.lexemes) lexeme
            WHERE lexeme <> ALL({{common_lexemes}}::text[])) AS rare_q,
           l.lexemes && {{common_lexemes}}::text[] AS has_common
    FROM (
        SELECT tsvector_to_array(
                   to_tsvector('english', {{query}} || ' ' || coalesce({{expanded_query}}::text, ''))
               ) AS lexemes
    ) l
),
-- Three tiers, each broadening only when the ones before came back short of the leg depth, and
-- each ranking a capped candidate set, so a query full of common words cannot make this leg rank
-- thousands of rows.
lexical_strict AS (
    SELECT c.id, ts_rank_cd(c.search_vector, q.strict_q) AS score
    FROM lexical_query q,
         LATERAL ({_matching("strict_q")}) c
    WHERE {{w_lexical}}::float8 > 0
    ORDER BY score DESC, c.id
    LIMIT {{leg_depth}}
),
-- Any of the rarer lexemes: a question's "like" or "would" would fetch a fifth of the table and
-- says little about relevance. ts_rank (term frequency, all lexemes) separates OR matches better
-- than cover density, which rewards several terms close together.
lexical_rare AS (
    SELECT c.id, ts_rank(c.search_vector, q.broad_q) AS score
    FROM lexical_query q,
         LATERAL ({_matching("rare_q")}) c
    WHERE {{w_lexical}}::float8 > 0
      AND q.rare_q IS NOT NULL
      AND (SELECT count(*) FROM lexical_strict) < {{leg_depth}}
    ORDER BY score DESC, c.id
    LIMIT {{leg_depth}}
),
-- Any lexeme at all, common ones included (when none is common, the rare tier already was this).
lexical_any AS (
    SELECT c.id, ts_rank(c.search_vector, q.broad_q) AS score
    FROM lexical_query q,
         LATERAL ({_matching("broad_q")}) c
    WHERE {{w_lexical}}::float8 > 0
      AND (q.has_common OR q.rare_q IS NULL)
      AND (SELECT count(*) FROM lexical_strict) + (SELECT count(*) FROM lexical_rare) < {{leg_depth}}
    ORDER BY score DESC, c.id
    LIMIT {{leg_depth}}
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
    LIMIT {{leg_depth}}
),
-- Approximate nearest neighbours on the HNSW index (iterative scan keeps filtered results full).
-- Small scopes skip it: walking the graph past thousands of other namespaces' rows costs more
-- than scanning the scope.
dense_ann AS (
    SELECT m.id, m.embedding <=> {{query_vec}}::halfvec AS distance
    FROM memories m
    WHERE {{w_dense}}::float8 > 0
      AND NOT {{small_scope}}::boolean
      AND {{query_vec}}::halfvec IS NOT NULL
      AND m.embedding IS NOT NULL
      AND m.embedding_model = {{embedding_model}}::text
      AND {_IN_SCOPE}
    ORDER BY m.embedding <=> {{query_vec}}::halfvec
    LIMIT {{leg_depth}}
),
-- Exact scan of the scope: for small scopes, or when the index scan came back short although the
-- scope may hold more (selective filters, or a scope that is a sliver of a big table). `+ 0` keeps
-- this ORDER BY off the HNSW index.
dense_exact AS (
    SELECT m.id, m.distance
    FROM {_EMBEDDED_IN_SCOPE}
    WHERE ({{small_scope}}::boolean OR (SELECT count(*) FROM dense_ann) < {{leg_depth}})
      AND {{w_dense}}::float8 > 0
      AND {{query_vec}}::halfvec IS NOT NULL
    ORDER BY m.distance + 0
    LIMIT {{leg_depth}}
),
dense AS (
    SELECT id, distance, row_number() OVER (ORDER BY distance, id) AS rank
    FROM (
        SELECT id, distance FROM dense_exact
        UNION ALL
        SELECT id, distance FROM dense_ann WHERE NOT EXISTS (SELECT 1 FROM dense_exact)
    ) candidates
),
-- Concept graph: seed the concepts the query names (and the nearest concept embeddings), walk
-- co-occurrence edges with decay, never through hubs, and score the memories that mention what was
-- reached, rare concepts counting more than common ones.
graph_scope AS (
    SELECT id AS namespace_id, graph_memories,
           greatest({{graph_hub_min_doc_freq}}::float8, {{graph_hub_fraction}}::float8 * graph_memories)
               AS hub_ceiling
    FROM namespaces
    WHERE id = ANY({{namespace_ids}}::bigint[]) AND {{w_graph}}::float8 > 0
),
graph_seeds AS (
    (SELECT c.id AS concept_id, 1.0::float8 AS activation, c.display_name AS path,
            ln(1 + s.graph_memories::float8 / greatest(c.doc_freq, 1)) AS specificity
     FROM concepts c JOIN graph_scope s ON s.namespace_id = c.namespace_id
     WHERE (c.name = ANY({{seed_names}}::text[]) OR c.aliases && {{seed_names}}::text[])
       AND c.doc_freq <= s.hub_ceiling
     ORDER BY c.doc_freq, c.id
     LIMIT {{graph_max_seeds}})
    UNION ALL
    SELECT near.id, near.similarity, near.display_name,
           ln(1 + s.graph_memories::float8 / greatest(near.doc_freq, 1))
    FROM graph_scope s,
         LATERAL (
             SELECT c.id, c.display_name, c.doc_freq,
                    1 - (c.embedding <=> {{query_vec}}::halfvec) AS similarity
             FROM concepts c
             WHERE c.namespace_id = s.namespace_id
               AND c.embedding IS NOT NULL
               AND {{query_vec}}::halfvec IS NOT NULL
             ORDER BY c.embedding <=> {{query_vec}}::halfvec
             LIMIT {{graph_seed_neighbors}}
         ) near
    WHERE near.similarity >= {{graph_seed_min_similarity}} AND near.doc_freq <= s.hub_ceiling
),
-- At most two hops, each bounded: every seed follows its strongest edges, and only the most
-- activated first-hop concepts go on, so the walk reads O(seeds + fanout) edge lists, never fanout².
graph_hop1 AS (
    SELECT nb.id AS concept_id, f.activation * {{graph_hop_decay}}::float8 * nb.strength AS activation,
           f.path || ' > ' || nb.display_name AS path, nb.specificity
    FROM graph_seeds f
    CROSS JOIN LATERAL ({_neighbours("f")}) nb
    WHERE {{graph_max_hops}} >= 1
),
graph_hop2 AS (
    SELECT nb.id AS concept_id, h.activation * {{graph_hop_decay}}::float8 * nb.strength AS activation,
           h.path || ' > ' || nb.display_name AS path, nb.specificity
    FROM (
        SELECT concept_id, activation, path FROM graph_hop1
        ORDER BY activation DESC, concept_id
        LIMIT {{graph_fanout}}
    ) h
    CROSS JOIN LATERAL ({_neighbours("h")}) nb
    WHERE {{graph_max_hops}} >= 2
),
-- The most activated concepts, numbered: a memory's explain path is that of its best concept.
graph_concepts AS (
    SELECT concept_id, activation, path, specificity,
           row_number() OVER (ORDER BY activation DESC, concept_id) AS concept_rank
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
    LIMIT {{graph_max_concepts}}
),
-- Memories score the activation of the concepts they mention, rare concepts (ln(1 + N/df))
-- counting more than common ones.
graph_scored AS (
    SELECT mc.memory_id AS id, sum(gc.activation * gc.specificity) AS score,
           min(gc.concept_rank) AS best_concept
    FROM graph_concepts gc
    CROSS JOIN LATERAL (
        SELECT l.memory_id FROM memory_concepts l
        WHERE l.concept_id = gc.concept_id
        ORDER BY l.memory_id DESC
        LIMIT {{graph_memories_per_concept}}
    ) mc
    -- Only live, non-sensitive memories are ever linked (delete and PATCH unlink in their own
    -- transaction), so memory rows are read only when the request filters on their columns.
    WHERE NOT {{row_filters}}::boolean
       OR EXISTS (SELECT 1 FROM memories m WHERE m.id = mc.memory_id AND {_IN_SCOPE})
    GROUP BY mc.memory_id
    ORDER BY score DESC, mc.memory_id
    LIMIT {{leg_depth}}
),
graph AS (
    SELECT g.id, g.score, gc.path, row_number() OVER (ORDER BY g.score DESC, g.id) AS rank
    FROM graph_scored g
    JOIN graph_concepts gc ON gc.concept_rank = g.best_concept
),
fused AS (
    SELECT id,
           lexical.rank AS lexical_rank,
           lexical.score AS lexical_score,
           dense.rank AS dense_rank,
           dense.distance AS dense_distance,
           graph.rank AS graph_rank,
           graph.path AS graph_path,
           coalesce({{w_lexical}}::float8 / ({{rrf_k}} + lexical.rank), 0)
         + coalesce({{w_dense}}::float8 / ({{rrf_k}} + dense.rank), 0)
         + coalesce({{w_graph}}::float8 / ({{rrf_k}} + graph.rank), 0) AS fused_score
    FROM lexical
    FULL OUTER JOIN dense USING (id)
    FULL OUTER JOIN graph USING (id)
),
ranked AS (
    SELECT f.*,
           f.fused_score * (1 - {{importance_prior}}::float8 + {{importance_prior}}::float8 * m.importance)
               AS final_score,
           m.importance, m.created_at
    FROM fused f
    -- One primary-key lookup per fused id. OFFSET 0 keeps the subquery a lookup: a cached generic
    -- plan cannot know how few ids the LIMITed legs yield and would hash the whole table instead.
    CROSS JOIN LATERAL (SELECT importance, created_at FROM memories WHERE id = f.id OFFSET 0) m
    ORDER BY final_score DESC, f.id
    LIMIT {{limit}}
)
SELECT r.id, n.name AS namespace, m.content, m.category, m.tags, m.importance, m.is_sensitive,
       m.created_at, r.lexical_rank, r.lexical_score, r.dense_rank, r.dense_distance,
       r.graph_rank, r.graph_path, r.fused_score, r.final_score
FROM ranked r
CROSS JOIN LATERAL (SELECT * FROM memories WHERE id = r.id OFFSET 0) m
JOIN namespaces n ON n.id = m.namespace_id
ORDER BY
    CASE WHEN {{sort}}::text = 'importance' THEN r.importance END DESC NULLS LAST,
    CASE WHEN {{sort}}::text = 'recency' THEN r.created_at END DESC NULLS LAST,
    r.final_score DESC,
    r.id
"""


def compile_recall_sql(sql: str = RECALL_SQL) -> str:
    """Replace `{name}` placeholders with `$n` in RECALL_PARAMS order."""
    return sql.format(**{name: f"${i}" for i, name in enumerate(RECALL_PARAMS, start=1)})


RECALL_STATEMENT = compile_recall_sql()
