"""Reading the concept graph, as the `/v1/graph` routes and the web UI show it.

Concept and memory ids here are public ids (random, see migration 0008): the identities, counters
shared by every tenant, would show how much everyone else stored. Queries take and answer public ids
and use the internal ones only to walk the graph. Every query is scoped to one user's namespaces.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import asyncpg
import msgspec

from app.db.queries import fragment_text, with_shared_fragments

Conn: TypeAlias = asyncpg.Pool | asyncpg.Connection

_CONCEPT_COLUMNS = (
    "c.public_id AS id, c.name, c.display_name, c.kind, c.aliases, c.doc_freq, n.name AS namespace"
)

# By public id; `internal_id` is what the graph's own tables refer to.
_OWNED_CONCEPT = f"""
SELECT {_CONCEPT_COLUMNS}, c.id AS internal_id
FROM concepts c JOIN namespaces n ON n.id = c.namespace_id
WHERE c.public_id = $1 AND n.user_id = $2
"""


def association(a: str, b: str) -> str:
    """The SQL of edge `e`'s association between concept rows `a` and `b`, rounded as the routes
    answer it: the graph's `association` fragment (app/graph/fragments.sql), which recall's graph
    leg uses too."""
    ratio = fragment_text(
        "association", "e.weight", f"{a}.doc_freq", f"{b}.doc_freq", package="app.graph", file="fragments.sql"
    )
    return f"round({ratio}::numeric, 3)::float8"


# The public ids of (at most five) evidence memories of edge `e`, in the edge's order.
_EVIDENCE = """
(SELECT coalesce(array_agg(m.public_id ORDER BY x.ord), '{}')
 FROM unnest(e.evidence_memory_ids[1:5]) WITH ORDINALITY AS x (id, ord) JOIN memories m ON m.id = x.id)
"""

# The browse list's orders, by the name a page or a query parameter gives them: most widespread
# first (the default), by name, or most recently mentioned (`updated_at` moves when a memory links to
# or leaves the concept). `c.id` breaks ties so that pages never repeat or skip a concept.
ConceptOrder: TypeAlias = Literal["memories", "name", "recent"]
CONCEPT_ORDERS: dict[str, str] = {
    "memories": "c.doc_freq DESC, c.id",
    "name": "c.name, c.id",
    "recent": "c.updated_at DESC, c.id DESC",
}

# One page of the user's concepts ($2: the namespaces to show, resolved for the user), with how many
# match in all (`total`, the same on every row: no second round trip for the pager).
_BROWSE = f"""
SELECT {_CONCEPT_COLUMNS}, count(*) OVER () AS total
FROM concepts c JOIN namespaces n ON n.id = c.namespace_id
WHERE n.user_id = $1
  AND c.namespace_id = ANY($2::bigint[])
  AND ($3::text IS NULL OR strpos(c.name, $3) > 0 OR c.aliases @> ARRAY[$3])
ORDER BY {{order}}
LIMIT $4 OFFSET $5
"""
_BROWSE_BY = {sort: _BROWSE.replace("{order}", order) for sort, order in CONCEPT_ORDERS.items()}

# A concept's strongest links: the concepts it co-occurs with, strongest association first (ties:
# the heavier edge), at most $2, with how many it has in all (`total`, for "show more").
_STRONGEST_LINKS = f"""
SELECT {_CONCEPT_COLUMNS}, c.id AS internal_id, e.weight, {association("s", "c")} AS association,
       count(*) OVER () AS total
FROM concept_edges e
JOIN concepts s ON s.id = $1
JOIN concepts c ON c.id = CASE WHEN e.source_id = $1 THEN e.target_id ELSE e.source_id END
JOIN namespaces n ON n.id = c.namespace_id
WHERE e.source_id = $1 OR e.target_id = $1
ORDER BY association DESC, e.weight DESC, c.id
LIMIT $2
"""

# The edges among some concepts (internal ids $1), strongest association first, at most $2: the
# links between a concept's strongest neighbours, which the graph view draws beside its own.
_EDGES_AMONG = f"""
SELECT s.public_id AS source, t.public_id AS target, e.weight, {association("s", "t")} AS association
FROM concept_edges e JOIN concepts s ON s.id = e.source_id JOIN concepts t ON t.id = e.target_id
WHERE e.source_id = ANY($1::bigint[]) AND e.target_id = ANY($1::bigint[])
ORDER BY association DESC, e.weight DESC, e.id
LIMIT $2
"""

_CONCEPT_MEMORIES = """
SELECT m.public_id AS id, m.content, m.category, m.created_at
FROM memory_concepts mc JOIN memories m ON m.id = mc.memory_id
WHERE mc.concept_id = $1 AND {{ visible(m, false) }} AND {{ current(m, NULL::timestamptz) }}
ORDER BY m.created_at DESC, m.id DESC
LIMIT $2
"""

# Breadth-first neighbourhood, bounded in depth and size; edges are undirected co-occurrences.
_NEIGHBORHOOD = f"""
WITH RECURSIVE walk (id, depth) AS (
    SELECT $1::bigint, 0
    UNION
    SELECT CASE WHEN e.source_id = w.id THEN e.target_id ELSE e.source_id END, w.depth + 1
    FROM walk w
    JOIN concept_edges e ON (e.source_id = w.id OR e.target_id = w.id)
    WHERE w.depth < $2
),
nodes AS (
    SELECT id, min(depth) AS depth FROM walk GROUP BY id ORDER BY min(depth), id LIMIT $3
)
SELECT {_CONCEPT_COLUMNS}, nodes.depth,
       (SELECT coalesce(json_agg(json_build_object(
                'source', c.public_id, 'target', t.public_id, 'weight', e.weight,
                'association', {association("c", "t")},
                'relation', e.relation, 'evidence', {_EVIDENCE}
            )), '[]'::json)
        FROM concept_edges e JOIN concepts t ON t.id = e.target_id
        WHERE e.source_id = c.id AND e.target_id IN (SELECT id FROM nodes)
       ) AS edges
FROM nodes JOIN concepts c ON c.id = nodes.id JOIN namespaces n ON n.id = c.namespace_id
ORDER BY nodes.depth, c.id
"""

# Each seed's neighbours, the most strongly associated first.
NEIGHBORS = f"""
SELECT s.id AS seed, {_CONCEPT_COLUMNS}, e.weight, {association("sc", "c")} AS association
FROM unnest($1::bigint[]) AS s (id)
JOIN concepts sc ON sc.id = s.id
JOIN concept_edges e ON (e.source_id = s.id OR e.target_id = s.id)
JOIN concepts c ON c.id = CASE WHEN e.source_id = s.id THEN e.target_id ELSE e.source_id END
JOIN namespaces n ON n.id = c.namespace_id
WHERE n.user_id = $2
ORDER BY s.id, association DESC, e.weight DESC, c.id
"""


class ConceptOut(msgspec.Struct, kw_only=True):
    id: int
    name: str
    display_name: str
    kind: str | None
    aliases: list[str]
    doc_freq: int
    namespace: str


class ConceptMemory(msgspec.Struct, kw_only=True):
    id: int
    content: str
    category: str | None


class ConceptDetail(ConceptOut, kw_only=True):
    memories: list[ConceptMemory]


class GraphEdge(msgspec.Struct, kw_only=True):
    source: int
    target: int
    weight: float
    """Memories mentioning both concepts (the co-occurrence count)."""
    association: float
    """How strongly the edge ties its concepts, 0 to 1 (`association`): what to rank links by."""
    relation: str
    evidence: list[int]


class Neighborhood(msgspec.Struct, kw_only=True):
    nodes: list[ConceptOut]
    edges: list[GraphEdge]


class ConceptPage(msgspec.Struct, kw_only=True):
    items: list[ConceptOut]
    total: int
    """How many concepts match in all (0 when the page is past the last one)."""


class Link(msgspec.Struct, kw_only=True):
    concept: ConceptOut
    weight: float
    """Memories mentioning both concepts."""
    association: float
    """How strongly the link ties them, 0 to 1 (`association`): what links are ranked by."""


class StrongestLinks(msgspec.Struct, kw_only=True):
    links: list[Link]
    total: int
    """How many links the concept has in all (`links` holds the strongest of them)."""


# The concepts of some of the user's memories (a UI list page links each to its concepts, a memory's
# page to all of them), at most $3 per memory, most widespread first.
_CONCEPTS_OF_MEMORIES = f"""
SELECT m.public_id AS memory_id, {_CONCEPT_COLUMNS}
FROM memories m
JOIN namespaces n ON n.id = m.namespace_id
CROSS JOIN LATERAL (
    SELECT c.* FROM memory_concepts mc JOIN concepts c ON c.id = mc.concept_id
    WHERE mc.memory_id = m.id
    ORDER BY c.doc_freq DESC, c.id
    LIMIT $3
) c
WHERE m.public_id = ANY($1::bigint[]) AND n.user_id = $2
ORDER BY m.public_id, c.doc_freq DESC, c.id
"""


def concept_of(row: Any) -> ConceptOut:
    return ConceptOut(**{f: row[f] for f in ConceptOut.__struct_fields__})


async def owned_concept(conn: Conn, user_id: int, concept_id: int) -> asyncpg.Record | None:
    """The concept with public id `concept_id` if it is in one of the user's namespaces; its
    `internal_id` is what the graph's tables refer to."""
    return await conn.fetchrow(_OWNED_CONCEPT, concept_id, user_id)


async def concept_detail(conn: Conn, concept: asyncpg.Record, limit: int = 50) -> ConceptDetail:
    """An owned concept (`owned_concept`'s row) with the live, non-sensitive memories that mention it."""
    memories = await conn.fetch(with_shared_fragments(_CONCEPT_MEMORIES), concept["internal_id"], limit)
    return ConceptDetail(
        **{f: concept[f] for f in ConceptOut.__struct_fields__},
        memories=[ConceptMemory(id=m["id"], content=m["content"], category=m["category"]) for m in memories],
    )


async def neighborhood(conn: Conn, concept: asyncpg.Record, depth: int, max_nodes: int) -> Neighborhood:
    """Concepts within `depth` hops of an owned concept, at most `max_nodes`, with the edges among them."""
    rows = await conn.fetch(_NEIGHBORHOOD, concept["internal_id"], depth, max_nodes)
    nodes = [concept_of(r) for r in rows]
    edges = [GraphEdge(**e) for r in rows for e in msgspec.json.decode(r["edges"])]
    return Neighborhood(nodes=nodes, edges=edges)


async def memory_concepts(conn: Conn, user_id: int, memory_id: int, limit: int = 50) -> list[ConceptOut]:
    """The concepts a memory of the user mentions (public ids), most widespread first."""
    return (await concepts_of_memories(conn, user_id, [memory_id], limit)).get(memory_id, [])


async def concepts_of_memories(
    conn: Conn, user_id: int, memory_ids: list[int], per_memory: int = 5
) -> dict[int, list[ConceptOut]]:
    """The concepts each of the user's memories (public ids) mentions, at most `per_memory` each."""
    rows = await conn.fetch(_CONCEPTS_OF_MEMORIES, memory_ids, user_id, per_memory)
    found: dict[int, list[ConceptOut]] = {}
    for row in rows:
        found.setdefault(row["memory_id"], []).append(concept_of(row))
    return found


async def browse_concepts(
    conn: Conn,
    user_id: int,
    namespace_ids: list[int],
    term: str | None,
    sort: ConceptOrder,
    limit: int,
    offset: int = 0,
) -> ConceptPage:
    """A page of the user's concepts in `namespace_ids` (resolved for the user, see
    `app.namespaces.resolve_namespaces`), whose name contains `term` (or an alias equals it), in the
    order `sort` names (a key of `CONCEPT_ORDERS`)."""
    rows = await conn.fetch(_BROWSE_BY[sort], user_id, namespace_ids, term, limit, offset)
    return ConceptPage(items=[concept_of(r) for r in rows], total=rows[0]["total"] if rows else 0)


async def strongest_links(conn: Conn, concept: asyncpg.Record, limit: int) -> StrongestLinks:
    """An owned concept's (`owned_concept`'s row) `limit` strongest links by association: a
    well-known concept co-occurs with many others once or twice, and the links that tie two concepts
    together (most memories of either name both) are what a person wants to see."""
    return _links_of(await conn.fetch(_STRONGEST_LINKS, concept["internal_id"], limit))


def _links_of(rows: list[asyncpg.Record]) -> StrongestLinks:
    return StrongestLinks(
        links=[Link(concept=concept_of(r), weight=r["weight"], association=r["association"]) for r in rows],
        total=rows[0]["total"] if rows else 0,
    )


async def strongest_neighborhood(conn: Conn, concept: asyncpg.Record, limit: int) -> Neighborhood:
    """An owned concept, its `limit` strongest links and, among those neighbours, their own
    `limit` strongest links: the graph view's nodes and edges, the concept first."""
    rows = await conn.fetch(_STRONGEST_LINKS, concept["internal_id"], limit)
    among = await conn.fetch(_EDGES_AMONG, [r["internal_id"] for r in rows], limit)
    seed = concept_of(concept)
    links = _links_of(rows).links
    own = [(seed.id, link.concept.id, link.weight, link.association) for link in links]
    between = [(r["source"], r["target"], r["weight"], r["association"]) for r in among]
    return Neighborhood(
        nodes=[seed, *(link.concept for link in links)],
        edges=[
            GraphEdge(
                source=source,
                target=target,
                weight=weight,
                association=association,
                relation="co_occurs",
                evidence=[],
            )
            for source, target, weight, association in own + between
        ],
    )
