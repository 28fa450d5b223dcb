"""`/v1/graph/*`: browse and curate the concept graph, always scoped to the caller's namespaces
(the queries are `app.graph.browse`, shared with the web UI).

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
from app.graph.browse import (
    NEIGHBORS,
    ConceptDetail,
    ConceptOrder,
    ConceptOut,
    Neighborhood,
    browse_concepts,
    concept_detail,
    neighborhood,
    owned_concept,
)
from app.graph.indexer import GraphIndexer, merge_concepts
from app.namespaces import resolve_namespaces

AuthRequest = Request[AuthUser, int, Any]
MAX_ID = 2**63 - 1  # ids are bigints; a larger one failed in the driver (500)
ConceptId = Annotated[int, PathParameter(ge=1, le=MAX_ID)]
BodyConceptId = Annotated[int, msgspec.Meta(ge=1, le=MAX_ID)]
NOT_YOURS = problem("No concept with this id in your namespaces")


class NeighborsIn(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    concept_ids: Annotated[list[BodyConceptId], msgspec.Meta(min_length=1, max_length=100)]


class Neighbor(ConceptOut, kw_only=True):
    weight: float
    """Memories mentioning both concepts."""
    association: float
    """How strongly the two are tied, 0 to 1 (`app.graph.browse.association`): strongest first."""


class MergeIn(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    into: BodyConceptId


class GraphController(Controller):
    path = "/graph"
    tags = ["graph"]

    async def _owned(self, state: State, user_id: int, concept_id: int) -> Any:
        row = await owned_concept(state.db.read, user_id, concept_id)
        if row is None:
            raise NotFound(f"concept {concept_id} not found")
        return row

    @get(
        "/concepts",
        summary="Search concepts by name; most widespread first, or by `sort`",
        responses={404: problem("A `namespace` you do not have")},
    )
    async def search(
        self,
        request: AuthRequest,
        state: State,
        q: FromQuery[str | None] = None,
        namespace: FromQuery[list[str] | None] = None,
        limit: Annotated[int, QueryParameter(ge=1, le=200)] = 50,
        sort: Annotated[
            ConceptOrder,
            QueryParameter(
                description="`memories`: most memories first; `name`; `recent`: last mentioned first"
            ),
        ] = "memories",
    ) -> list[ConceptOut]:
        if q is not None and "\x00" in q:
            raise InvalidInput("q contains a NUL character")
        ns_ids = await resolve_namespaces(state.db.read, request.user.id, namespace or None)
        term = q.strip().lower() if q and q.strip() else None
        return (await browse_concepts(state.db.read, request.user.id, ns_ids, term, sort, limit)).items

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
        return await concept_detail(state.db.read, row, limit)

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
        return await neighborhood(state.db.read, seed, depth, max_nodes)

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
        for r in await state.db.read.fetch(NEIGHBORS, list(public_of), request.user.id):
            fields = {f: r[f] for f in ConceptOut.__struct_fields__}
            result[str(public_of[r["seed"]])].append(
                Neighbor(**fields, weight=r["weight"], association=r["association"])
            )
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
