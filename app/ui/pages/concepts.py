"""The concept pages: search the user's concepts, and one concept with the memories that mention it
and its neighbourhood, as a table (works without JavaScript) and as an interactive graph
(`/ui/static/graph.js` draws `neighborhood.json`)."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import get
from litestar.params import PathParameter, QueryParameter
from litestar.response import Response, Template

from app.errors import NotFound
from app.graph.browse import (
    concept_detail,
    neighborhood,
    neighborhood_by_depth,
    owned_concept,
    search_concepts,
)
from app.ui.web import Session, UiRequest, page

ConceptId = Annotated[int, PathParameter(ge=1, le=2**63 - 1)]
SEARCH_LIMIT = 100
GRAPH_DEPTH = 2
GRAPH_NODES = 60


@get("/concepts", include_in_schema=False)
async def concepts_page(request: UiRequest, session: Session) -> Template:
    term = request.query_params.get("q", "").strip().lower().replace("\x00", "")
    found = await search_concepts(
        request.app.state.db.read, session.user.id, None, term or None, SEARCH_LIMIT
    )
    return page(request, "concepts.html", session, q=term, concepts=found)


async def _owned(request: UiRequest, session: Session, concept_id: int) -> Any:
    row = await owned_concept(request.app.state.db.read, session.user.id, concept_id)
    if row is None:
        raise NotFound(f"concept {concept_id} not found in your namespaces")
    return row


@get("/concepts/{concept_id:int}", include_in_schema=False)
async def concept_page(request: UiRequest, session: Session, concept_id: ConceptId) -> Template:
    db = request.app.state.db.read
    concept = await _owned(request, session, concept_id)
    detail = await concept_detail(db, concept)
    around = await neighborhood(db, concept, 1, GRAPH_NODES)
    weights = {e.target if e.source == concept_id else e.source: e.weight for e in around.edges
               if concept_id in (e.source, e.target)}  # fmt: skip
    neighbours = sorted(
        (node for node in around.nodes if node.id != concept_id), key=lambda n: -weights.get(n.id, 0.0)
    )
    return page(request, "concept.html", session, concept=detail, neighbours=neighbours, weights=weights)


@get("/concepts/{concept_id:int}/neighborhood.json", include_in_schema=False)
async def concept_graph(
    request: UiRequest,
    session: Session,
    concept_id: ConceptId,
    depth: Annotated[int, QueryParameter(ge=1, le=3)] = GRAPH_DEPTH,
) -> Response[dict[str, Any]]:
    """The graph view's data: nodes (sized by document frequency) and weighted edges."""
    concept = await _owned(request, session, concept_id)
    around, depth_of = await neighborhood_by_depth(request.app.state.db.read, concept, depth, GRAPH_NODES)
    return Response(
        {
            "nodes": [
                {"id": n.id, "label": n.display_name, "doc_freq": n.doc_freq, "depth": depth_of.get(n.id, 0)}
                for n in around.nodes
            ],
            "edges": [{"source": e.source, "target": e.target, "weight": e.weight} for e in around.edges],
        },
        media_type="application/json",
    )
