"""SQL that keeps the concept graph true: link memories to concepts, count co-occurrence edges,
and take a memory's evidence back out when it is changed or deleted."""

# Sensitive memories stay out of the graph: concept names are shown by the graph routes and in
# explain output, and would be sent to a hosted embedder.
MEMORIES_TO_INDEX = """
SELECT id, namespace_id, content, tags, expanded_keywords
FROM memories
WHERE id = ANY($1::bigint[]) AND deleted_at IS NULL AND NOT is_sensitive
"""

# Takes the graph locks of the memories' namespaces, in namespace order so that two writers never
# wait on each other crosswise; returns the namespaces. $2 is the lock key base.
LOCK_GRAPHS_OF_MEMORIES = """
SELECT s.namespace_id, pg_advisory_xact_lock($2::bigint + s.namespace_id)
FROM (
    SELECT DISTINCT namespace_id FROM memories WHERE id = ANY($1::bigint[]) ORDER BY namespace_id
) s
"""

LOCK_GRAPHS = """
SELECT pg_advisory_xact_lock($2::bigint + s.namespace_id)
FROM (SELECT DISTINCT namespace_id FROM unnest($1::bigint[]) AS u (namespace_id) ORDER BY 1) s
"""

# For just-stored memories: one already linked (a racing update indexed it first) is left alone.
UNLINKED_MEMORIES_TO_INDEX = """
SELECT m.id, m.namespace_id, m.content, m.tags, m.expanded_keywords
FROM memories m
WHERE m.id = ANY($1::bigint[]) AND m.deleted_at IS NULL AND NOT m.is_sensitive
  AND NOT EXISTS (SELECT 1 FROM memory_concepts mc WHERE mc.memory_id = m.id)
"""

# The concept id of each wanted (namespace, name), in one round trip: a surface form known as an
# alias maps onto that concept (one GIN probe for all names with `&&`: almost no concept has
# aliases, so it usually finds nothing at once); a known name is read, not rewritten; only new
# names are inserted. The caller holds the namespaces' graph locks, so no other writer adds a
# concept meanwhile; ON CONFLICT is the safety net should one do so without the lock.
RESOLVE_CONCEPTS = """
WITH wanted AS (
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[])
        AS w (namespace_id, name, display_name, kind)
),
aliased AS (
    SELECT w.namespace_id, w.name, c.id
    FROM wanted w
    JOIN concepts c ON c.namespace_id = w.namespace_id AND w.name = ANY(c.aliases)
    WHERE c.aliases && $2::text[]
),
known AS (
    SELECT c.namespace_id, c.name, c.id
    FROM wanted w JOIN concepts c ON c.namespace_id = w.namespace_id AND c.name = w.name
    WHERE NOT EXISTS (SELECT 1 FROM aliased a WHERE a.namespace_id = w.namespace_id AND a.name = w.name)
),
inserted AS (
    INSERT INTO concepts (namespace_id, name, display_name, kind)
    SELECT w.namespace_id, w.name, w.display_name, w.kind
    FROM wanted w
    WHERE NOT EXISTS (SELECT 1 FROM aliased a WHERE a.namespace_id = w.namespace_id AND a.name = w.name)
      AND NOT EXISTS (SELECT 1 FROM known k WHERE k.namespace_id = w.namespace_id AND k.name = w.name)
    ON CONFLICT (namespace_id, name) DO UPDATE SET updated_at = now()
    RETURNING id, namespace_id, name, (xmax = 0) AS inserted
)
SELECT namespace_id, name, id, false AS inserted FROM aliased
UNION ALL SELECT namespace_id, name, id, false FROM known
UNION ALL SELECT namespace_id, name, id, inserted FROM inserted
"""

# Links (memory, concept) pairs and, in the same statement, counts what they add: each concept's
# doc_freq, each namespace's linked memories, and the co-occurrence edges (source < target, once
# per memory). The counts read the INSERT's RETURNING rows, as a statement's other parts do not see
# the rows it inserts. One round trip instead of four on every store.
LINK_AND_COUNT = """
WITH linked AS (
    INSERT INTO memory_concepts (memory_id, concept_id)
    SELECT * FROM unnest($1::bigint[], $2::bigint[])
    ON CONFLICT DO NOTHING
    RETURNING memory_id, concept_id
),
links AS (
    SELECT l.memory_id, l.concept_id, c.namespace_id
    FROM linked l JOIN concepts c ON c.id = l.concept_id
),
doc_freq AS (
    UPDATE concepts c SET doc_freq = c.doc_freq + d.n, updated_at = now()
    FROM (SELECT concept_id, count(*) AS n FROM links GROUP BY concept_id) d
    WHERE c.id = d.concept_id
),
graph_memories AS (
    UPDATE namespaces n SET graph_memories = n.graph_memories + d.memories
    FROM (SELECT namespace_id, count(DISTINCT memory_id) AS memories FROM links GROUP BY namespace_id) d
    WHERE n.id = d.namespace_id
),
pairs AS (
    SELECT a.namespace_id, a.concept_id AS source_id, b.concept_id AS target_id,
           count(*) AS n, array_agg(a.memory_id ORDER BY a.memory_id DESC) AS evidence
    FROM links a JOIN links b ON a.memory_id = b.memory_id AND a.concept_id < b.concept_id
    GROUP BY 1, 2, 3
)
INSERT INTO concept_edges AS e (namespace_id, source_id, target_id, weight, evidence_memory_ids)
SELECT namespace_id, source_id, target_id, n, evidence[1:$3] FROM pairs
ON CONFLICT (source_id, target_id, relation) DO UPDATE
SET weight = e.weight + EXCLUDED.weight,
    evidence_memory_ids = (EXCLUDED.evidence_memory_ids || e.evidence_memory_ids)[1:$3]
"""

COUNT_DOC_FREQ = """
UPDATE concepts c SET doc_freq = c.doc_freq + d.delta, updated_at = now()
FROM (
    SELECT mc.concept_id, $2::int * count(*) AS delta
    FROM memory_concepts mc WHERE mc.memory_id = ANY($1::bigint[])
    GROUP BY mc.concept_id
) d
WHERE c.id = d.concept_id
"""

COUNT_GRAPH_MEMORIES = """
UPDATE namespaces n SET graph_memories = greatest(n.graph_memories + $2::int * d.memories, 0)
FROM (
    SELECT m.namespace_id, count(DISTINCT m.id) AS memories
    FROM memories m JOIN memory_concepts mc ON mc.memory_id = m.id
    WHERE m.id = ANY($1::bigint[])
    GROUP BY m.namespace_id
) d
WHERE n.id = d.namespace_id
"""

# Take the memories' evidence out of their edges; RETURNING tells which edges have none left.
WEAKEN_EDGES = """
WITH links AS (
    SELECT memory_id, concept_id FROM memory_concepts WHERE memory_id = ANY($1::bigint[])
),
pairs AS (
    SELECT a.concept_id AS source_id, b.concept_id AS target_id, count(*) AS n
    FROM links a JOIN links b ON a.memory_id = b.memory_id AND a.concept_id < b.concept_id
    GROUP BY 1, 2
)
UPDATE concept_edges e
SET weight = e.weight - p.n,
    evidence_memory_ids = array(
        SELECT x FROM unnest(e.evidence_memory_ids) AS x WHERE x <> ALL($1::bigint[])
    )
FROM pairs p
WHERE e.source_id = p.source_id AND e.target_id = p.target_id AND e.relation = 'co_occurs'
RETURNING e.id, e.weight
"""

DELETE_EDGES = """
DELETE FROM concept_edges WHERE id = ANY($1::bigint[])
"""

DELETE_LINKS = """
DELETE FROM memory_concepts WHERE memory_id = ANY($1::bigint[]) RETURNING concept_id
"""

DROP_ORPHAN_CONCEPTS = """
DELETE FROM concepts WHERE id = ANY($1::bigint[]) AND doc_freq <= 0
"""

SET_CONCEPT_EMBEDDINGS = """
UPDATE concepts c SET embedding = v.embedding
FROM unnest($1::bigint[], $2::halfvec[]) AS v (id, embedding)
WHERE c.id = v.id
"""

# The closest existing concept of the namespace, for embedding-based canonicalisation.
NEAREST_CONCEPT = """
SELECT id, 1 - (embedding <=> $2::halfvec) AS similarity
FROM concepts
WHERE namespace_id = $1 AND embedding IS NOT NULL AND id <> $3
ORDER BY embedding <=> $2::halfvec
LIMIT 1
"""

ADD_ALIASES = """
UPDATE concepts t
SET aliases = (SELECT array_agg(DISTINCT a) FROM unnest(t.aliases || $2::text[]) AS a), updated_at = now()
WHERE t.id = $1
"""
