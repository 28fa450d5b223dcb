"""The recall statement: every leg, the fusion and the ordering in ONE reviewed SQL statement.

Legs are named CTEs that each yield (id, rank); fusion is weighted Reciprocal Rank Fusion,
`sum(w_leg / (k + rank_leg))`, where a leg that did not return a memory contributes 0. A leg whose
weight is 0 is not executed at all (its WHERE holds a constant false: a one-time filter), which is
how ablations run the very same statement. The concept-graph leg joins as a third CTE beside
`lexical` and `dense` and a third FULL JOIN in `fused`.

Placeholders are `{name}`; `compile_recall_sql` turns them into asyncpg's `$n`.
"""

from __future__ import annotations

RECALL_PARAMS: tuple[str, ...] = (
    "namespace_ids",  # bigint[]: the caller's namespaces in scope (resolved, never user text)
    "query",  # text: the user's query, parsed by websearch_to_tsquery (never a syntax error)
    "expanded_query",  # text: extra lexical terms, OR-ed in when broadening
    "query_vec",  # halfvec: query embedding, NULL when the embedder is unavailable
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
)

# The filter every leg applies, so all legs rank the same population.
_IN_SCOPE = """
          m.namespace_id = ANY({namespace_ids}::bigint[])
      AND m.deleted_at IS NULL
      AND (m.is_sensitive = false OR {include_sensitive}::boolean)
      AND ({category}::text IS NULL OR m.category = {category})
      AND ({tags}::text[] IS NULL
           OR CASE WHEN {tags_match_all}::boolean THEN m.tags @> {tags} ELSE m.tags && {tags} END)
      AND ({created_since}::timestamptz IS NULL OR m.created_at >= {created_since})
      AND ({created_until}::timestamptz IS NULL OR m.created_at < {created_until})"""

RECALL_SQL = f"""
WITH
-- The query twice: strict (all words, websearch syntax) and broad (any lexeme, plus expanded terms).
lexical_query AS (
    SELECT websearch_to_tsquery('english', {{query}}) AS strict_q,
           (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery
              FROM unnest(tsvector_to_array(
                   to_tsvector('english', {{query}} || ' ' || coalesce({{expanded_query}}::text, ''))
              )) AS lexeme) AS broad_q
),
lexical_strict AS (
    SELECT m.id, ts_rank_cd(m.search_vector, q.strict_q) AS score
    FROM memories m, lexical_query q
    WHERE {{w_lexical}}::float8 > 0
      AND m.search_vector @@ q.strict_q
      AND {_IN_SCOPE}
    ORDER BY score DESC, m.id
    LIMIT {{leg_depth}}
),
-- Broadened only when the strict match came back short; the candidate set is capped so a query
-- full of common words cannot make this leg rank thousands of rows. ts_rank (term frequency)
-- separates OR matches better than cover density, which needs several terms close together.
lexical_broad AS (
    SELECT c.id, ts_rank(c.search_vector, q.broad_q) AS score
    FROM lexical_query q,
         LATERAL (
             SELECT m.id, m.search_vector
             FROM memories m
             WHERE m.search_vector @@ q.broad_q
               AND {_IN_SCOPE}
             LIMIT {{lexical_cap}}
         ) c
    WHERE {{w_lexical}}::float8 > 0
      AND (SELECT count(*) FROM lexical_strict) < {{leg_depth}}
    ORDER BY score DESC, c.id
    LIMIT {{leg_depth}}
),
lexical AS (
    SELECT id, score, row_number() OVER (ORDER BY tier, score DESC, id) AS rank
    FROM (
        SELECT id, score, 0 AS tier FROM lexical_strict
        UNION ALL
        SELECT id, score, 1 AS tier FROM lexical_broad
        WHERE id NOT IN (SELECT id FROM lexical_strict)
    ) tiers
    ORDER BY rank
    LIMIT {{leg_depth}}
),
-- Approximate nearest neighbours on the HNSW index (iterative scan keeps filtered results full).
dense_ann AS (
    SELECT m.id, m.embedding <=> {{query_vec}}::halfvec AS distance
    FROM memories m
    WHERE {{w_dense}}::float8 > 0
      AND {{query_vec}}::halfvec IS NOT NULL
      AND m.embedding IS NOT NULL
      AND {_IN_SCOPE}
    ORDER BY m.embedding <=> {{query_vec}}::halfvec
    LIMIT {{leg_depth}}
),
-- Exact scan, run only when the index scan came back short although the scope may hold more
-- (tiny scopes, selective filters). `+ 0` keeps this ORDER BY off the HNSW index.
dense_exact AS (
    SELECT m.id, m.embedding <=> {{query_vec}}::halfvec AS distance
    FROM memories m
    WHERE (SELECT count(*) FROM dense_ann) < {{leg_depth}}
      AND {{w_dense}}::float8 > 0
      AND {{query_vec}}::halfvec IS NOT NULL
      AND m.embedding IS NOT NULL
      AND {_IN_SCOPE}
    ORDER BY (m.embedding <=> {{query_vec}}::halfvec) + 0
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
fused AS (
    SELECT id,
           lexical.rank AS lexical_rank,
           lexical.score AS lexical_score,
           dense.rank AS dense_rank,
           dense.distance AS dense_distance,
           coalesce({{w_lexical}}::float8 / ({{rrf_k}} + lexical.rank), 0)
         + coalesce({{w_dense}}::float8 / ({{rrf_k}} + dense.rank), 0) AS fused_score
    FROM lexical
    FULL OUTER JOIN dense USING (id)
),
ranked AS (
    SELECT f.*,
           f.fused_score * (1 - {{importance_prior}}::float8 + {{importance_prior}}::float8 * m.importance)
               AS final_score,
           m.importance, m.created_at
    FROM fused f
    JOIN memories m ON m.id = f.id
    ORDER BY final_score DESC, f.id
    LIMIT {{limit}}
)
SELECT r.id, n.name AS namespace, m.content, m.category, m.tags, m.importance, m.is_sensitive,
       m.created_at, r.lexical_rank, r.lexical_score, r.dense_rank, r.dense_distance,
       r.fused_score, r.final_score
FROM ranked r
JOIN memories m ON m.id = r.id
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
