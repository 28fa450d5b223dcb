"""`/v1/graph/*`: browse and curate the concept graph, always scoped to the caller's namespaces.

Concept and memory ids here are public ids (random, see migration 0008), as everywhere in the API:
the identities, counters shared by every tenant, would show how much everyone else stored. Queries
take and answer public ids and use the internal ones only to walk the graph."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, get, post
from litestar.datastructures import State
from litestar.params import FromQuery, JSONBody, PathParameter, QueryParameter

from app.auth import AuthUser
from app.auth.scopes import READ, SCOPE_OPT
from app.errors import InvalidInput, NotFound, problem
from app.graph.indexer import GraphIndexer, merge_concepts
from app.namespaces import resolve_namespaces

AuthRequest = Request[AuthUser, int, Any]
MAX_ID = 2**63 - 1  # ids are bigints; a larger one failed in the driver (500)
ConceptId = Annotated[int, PathParameter(ge=1, le=MAX_ID)]
BodyConceptId = Annotated[int, msgspec.Meta(ge=1, le=MAX_ID)]
NOT_YOURS = problem("No concept with this id in your namespaces")

_CONCEPT_COLUMNS = (
    "c.public_id AS id, c.name, c.display_name, c.kind, c.aliases, c.doc_freq, n.name AS namespace"
)

# By public id; `internal_id` is what the graph's own tables refer to.
_OWNED_CONCEPT = f"""
SELECT {_CONCEPT_COLUMNS}, c.id AS internal_id
FROM concepts c JOIN namespaces n ON n.id = c.namespace_id
WHERE c.public_id = $1 AND n.user_id = $2
"""

# The public ids of (at most five) evidence memories of edge `e`, in the edge's order.
_EVIDENCE = """
(SELECT coalesce(array_agg(m.public_id ORDER BY x.ord), '{}')
 FROM unnest(e.evidence_memory_ids[1:5]) WITH ORDINALITY AS x (id, ord) JOIN memories m ON m.id = x.id)
"""

_SEARCH = f"""
SELECT {_CONCEPT_COLUMNS}
FROM concepts c JOIN namespaces n ON n.id = c.namespace_id
WHERE n.user_id = $1
  AND ($2::bigint[] IS NULL OR c.namespace_id = ANY($2))
  AND ($3::text IS NULL OR strpos(c.name, $3) > 0 OR c.aliases @> ARRAY[$3])
ORDER BY c.doc_freq DESC, c.id
LIMIT $4
"""

_CONCEPT_MEMORIES = """
SELECT m.public_id AS id, m.content, m.category, m.created_at
FROM memory_concepts mc JOIN memories m ON m.id = mc.memory_id
WHERE mc.concept_id = $1 AND m.deleted_at IS NULL AND NOT m.is_sensitive
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
                'relation', e.relation, 'evidence', {_EVIDENCE}
            )), '[]'::json)
        FROM concept_edges e JOIN concepts t ON t.id = e.target_id
        WHERE e.source_id = c.id AND e.target_id IN (SELECT id FROM nodes)
       ) AS edges
FROM nodes JOIN concepts c ON c.id = nodes.id JOIN namespaces n ON n.id = c.namespace_id
ORDER BY nodes.depth, c.id
"""

_NEIGHBORS = f"""
SELECT s.id AS seed, {_CONCEPT_COLUMNS}, e.weight
FROM unnest($1::bigint[]) AS s (id)
JOIN concept_edges e ON (e.source_id = s.id OR e.target_id = s.id)
JOIN concepts c ON c.id = CASE WHEN e.source_id = s.id THEN e.target_id ELSE e.source_id END
JOIN namespaces n ON n.id = c.namespace_id
WHERE n.user_id = $2
ORDER BY s.id, e.weight DESC, c.id
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
    relation: str
    evidence: list[int]


class Neighborhood(msgspec.Struct, kw_only=True):
    nodes: list[ConceptOut]
    edges: list[GraphEdge]


class NeighborsIn(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    concept_ids: Annotated[list[BodyConceptId], msgspec.Meta(min_length=1, max_length=100)]


class Neighbor(ConceptOut, kw_only=True):
    weight: float


class MergeIn(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    into: BodyConceptId


def _concept(row: Any) -> ConceptOut:
    return ConceptOut(**{f: row[f] for f in ConceptOut.__struct_fields__})


class GraphController(Controller):
    path = "/graph"
    tags = ["graph"]

    async def _owned(self, state: State, user_id: int, concept_id: int) -> Any:
        row = await state.db.read.fetchrow(_OWNED_CONCEPT, concept_id, user_id)
        if row is None:
            raise NotFound(f"concept {concept_id} not found")
        return row

    @get(
        "/concepts",
        summary="Search concepts by name",
        responses={404: problem("A `namespace` you do not have")},
    )
    async def search(
        self,
        request: AuthRequest,
        state: State,
        q: FromQuery[str | None] = None,
        namespace: FromQuery[list[str] | None] = None,
        limit: Annotated[int, QueryParameter(ge=1, le=200)] = 50,
    ) -> list[ConceptOut]:
        if q is not None and "\x00" in q:
            raise InvalidInput("q contains a NUL character")
        ns_ids = await resolve_namespaces(state.db.read, request.user.id, namespace) if namespace else None
        term = q.strip().lower() if q and q.strip() else None
        rows = await state.db.read.fetch(_SEARCH, request.user.id, ns_ids, term, limit)
        return [_concept(r) for r in rows]

    @get(
        "/concepts/{concept_id:int}",
        summary="A concept with the memories that mention it",
        responses={404: NOT_YOURS},
    )
    async def read(
        self,
        request: AuthRequest,
        state: State,
        concept_id: ConceptId,
        limit: Annotated[int, QueryParameter(ge=1, le=200)] = 50,
    ) -> ConceptDetail:
        return await self._detail(state, request.user.id, concept_id, limit)

    async def _detail(self, state: State, user_id: int, concept_id: int, limit: int = 50) -> ConceptDetail:
        row = await self._owned(state, user_id, concept_id)
        memories = await state.db.read.fetch(_CONCEPT_MEMORIES, row["internal_id"], limit)
        return ConceptDetail(
            **{f: row[f] for f in ConceptOut.__struct_fields__},
            memories=[
                ConceptMemory(id=m["id"], content=m["content"], category=m["category"]) for m in memories
            ],
        )

    @get(
        "/concepts/{concept_id:int}/neighborhood",
        summary="Concepts within `depth` hops: {nodes, edges}",
        responses={404: NOT_YOURS},
    )
    async def neighborhood(
        self,
        request: AuthRequest,
        state: State,
        concept_id: ConceptId,
        depth: Annotated[int, QueryParameter(ge=1, le=3)] = 1,
        max_nodes: Annotated[int, QueryParameter(ge=1, le=500)] = 200,
    ) -> Neighborhood:
        seed = await self._owned(state, request.user.id, concept_id)
        rows = await state.db.read.fetch(_NEIGHBORHOOD, seed["internal_id"], depth, max_nodes)
        nodes = [_concept(r) for r in rows]
        edges = [GraphEdge(**e) for r in rows for e in msgspec.json.decode(r["edges"])]
        return Neighborhood(nodes=nodes, edges=edges)

    @post(
        "/neighbors",
        status_code=200,
        summary="1-hop neighbours of several concepts at once",
        opt={SCOPE_OPT: READ},  # a POST that only reads (merge, which changes the graph, needs write)
        responses={404: problem("One of `concept_ids` is not a concept in your namespaces")},
    )
    async def neighbors(
        self, request: AuthRequest, state: State, data: JSONBody[NeighborsIn]
    ) -> dict[str, list[Neighbor]]:
        public_of = {
            r["id"]: r["public_id"]  # internal id -> public id, of the caller's concepts asked for
            for r in await state.db.read.fetch(
                "SELECT c.id, c.public_id FROM concepts c JOIN namespaces n ON n.id = c.namespace_id "
                "WHERE c.public_id = ANY($1::bigint[]) AND n.user_id = $2",
                data.concept_ids,
                request.user.id,
            )
        }
        missing = [cid for cid in data.concept_ids if cid not in public_of.values()]
        if missing:
            raise NotFound(f"concept {missing[0]} not found")
        result: dict[str, list[Neighbor]] = {str(cid): [] for cid in data.concept_ids}
        for r in await state.db.read.fetch(_NEIGHBORS, list(public_of), request.user.id):
            fields = {f: r[f] for f in ConceptOut.__struct_fields__}
            result[str(public_of[r["seed"]])].append(Neighbor(**fields, weight=r["weight"]))
        return result

    @post(
        "/concepts/{concept_id:int}/merge",
        status_code=200,
        summary="Fold this concept into another",
        responses={404: problem("This concept or `into` is not a concept in your namespaces")},
    )
    async def merge(
        self, request: AuthRequest, state: State, concept_id: ConceptId, data: JSONBody[MergeIn]
    ) -> ConceptDetail:
        if data.into == concept_id:
            raise InvalidInput("a concept cannot be merged into itself")
        source = await self._owned(state, request.user.id, concept_id)
        target = await self._owned(state, request.user.id, data.into)
        if source["namespace"] != target["namespace"]:
            raise InvalidInput("concepts of different namespaces cannot be merged")
        indexer: GraphIndexer = state.graph_indexer
        async with state.db.write.acquire() as conn:
            await merge_concepts(conn, indexer, source["internal_id"], target["internal_id"])
        return await self._detail(state, request.user.id, data.into)
