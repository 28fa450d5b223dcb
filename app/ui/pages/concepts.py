"""The concept pages: browse the user's concepts (a namespace, a name, an order, a page at a
time), and one concept with the memories that mention it and its strongest links, as a table (works
without JavaScript) and as an interactive graph (`/ui/static/graph.js` draws `neighborhood.json`).

A concept co-occurs once with most of the concepts of the memories naming it, so its full
neighbourhood is a hairball of equal weights; the pages show its heaviest links first, a few at a
time, with a way to see more. Query parameters that do not read answer 400 with what to fix.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from litestar import get
from litestar.params import PathParameter
from litestar.response import Response, Template

from app.errors import ApiError, NotFound
from app.graph.browse import (
    ConceptOrder,
    ConceptPage,
    browse_concepts,
    concept_detail,
    owned_concept,
    strongest_links,
    strongest_neighborhood,
)
from app.namespaces import namespace_names, resolve_namespaces
from app.ui.web import Session, UiRequest, page

ConceptId = Annotated[int, PathParameter(ge=1, le=2**63 - 1)]
PAGE_SIZE = 60
MAX_PAGE = 10_000
SORTS: dict[ConceptOrder, str] = {
    "memories": "Most memories",
    "name": "Name",
    "recent": "Recently mentioned",
}
"""The list's orders (the keys of `app.graph.browse.CONCEPT_ORDERS`) as the sort picker names them;
the first is the default."""
LINKS_SHOWN = 12
"""How many of a concept's strongest links its page lists (and its graph draws) at first."""
MAX_LINKS = 200
GRAPH_MAX_LINKS = 60
"""More than this many neighbours draw as a hairball again; the table lists up to `MAX_LINKS`."""


class BadQuery(ApiError):
    """A query parameter a person must fix (400, shown with the form)."""


def whole_number(request: UiRequest, name: str, default: int, most: int) -> int:
    """The query parameter `name` as a whole number from 1 to `most`; `default` when absent."""
    text = request.query_params.get(name, "").strip()
    if not text:
        return default
    if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= most:
        raise BadQuery(f"{name}: a whole number from 1 to {most}, not {text[:20]!r}")
    return int(text)


@get("/concepts", include_in_schema=False)
async def concepts_page(request: UiRequest, session: Session) -> Template:
    db = request.app.state.db.read
    query = request.query_params
    term = query.get("q", "").strip().lower().replace("\x00", "")
    namespace = query.get("namespace", "").strip()
    sort = query.get("sort", "").strip() or next(iter(SORTS))
    order = next((known for known in SORTS if known == sort), None)
    error, found, page_number = "", ConceptPage(items=[], total=0), 1
    status = 200
    try:
        if order is None:
            raise BadQuery(f"sort: one of {', '.join(SORTS)}, not {sort[:20]!r}")
        page_number = whole_number(request, "page", 1, MAX_PAGE)
        namespace_ids = await resolve_namespaces(db, session.user.id, [namespace] if namespace else None)
        found = await browse_concepts(
            db, session.user.id, namespace_ids, term or None, order, PAGE_SIZE, (page_number - 1) * PAGE_SIZE
        )
    except ApiError as exc:
        error, status = exc.detail, exc.status_code
    chosen = {"q": term, "namespace": namespace, "sort": sort}
    last_page = max(1, -(-found.total // PAGE_SIZE))
    return page(
        request,
        "concepts.html",
        session,
        status_code=status,
        error=error,
        chosen=chosen,
        sorts=SORTS,
        namespaces=await namespace_names(db, session.user.id),
        concepts=found.items,
        total=found.total,
        first=(page_number - 1) * PAGE_SIZE + 1,
        previous_query=_query(chosen, page_number - 1) if 1 < page_number <= last_page + 1 else None,
        next_query=_query(chosen, page_number + 1) if page_number < last_page else None,
        page_number=page_number,
        last_page=last_page,
    )


def _query(chosen: dict[str, str], page_number: int) -> str:
    """The list's query for another page, keeping the filters (and leaving defaults out)."""
    params = {**chosen, "page": str(page_number) if page_number > 1 else ""}
    if params["sort"] == next(iter(SORTS)):
        params["sort"] = ""
    return urlencode({k: v for k, v in params.items() if v})


async def _owned(request: UiRequest, session: Session, concept_id: int) -> Any:
    row = await owned_concept(request.app.state.db.read, session.user.id, concept_id)
    if row is None:
        raise NotFound(f"concept {concept_id} not found in your namespaces")
    return row


@get("/concepts/{concept_id:int}", include_in_schema=False)
async def concept_page(request: UiRequest, session: Session, concept_id: ConceptId) -> Template:
    db = request.app.state.db.read
    shown = whole_number(request, "links", LINKS_SHOWN, MAX_LINKS)
    concept = await _owned(request, session, concept_id)
    detail = await concept_detail(db, concept)
    strongest = await strongest_links(db, concept, shown)
    drawn = min(shown, GRAPH_MAX_LINKS)
    more = min(MAX_LINKS, shown * 4) if strongest.total > shown and shown < MAX_LINKS else None
    return page(
        request,
        "concept.html",
        session,
        concept=detail,
        links=strongest.links,
        total_links=strongest.total,
        more_links=more,
        graph_src=f"/concepts/{concept_id}/neighborhood.json"
        + (f"?links={drawn}" if drawn != LINKS_SHOWN else ""),
    )


@get("/concepts/{concept_id:int}/neighborhood.json", include_in_schema=False)
async def concept_graph(
    request: UiRequest, session: Session, concept_id: ConceptId
) -> Response[dict[str, Any]]:
    """The graph view's data: the concept (depth 0) and its `links` strongest neighbours (depth 1),
    sized by document frequency, with the weighted edges to them and the heaviest among them."""
    shown = whole_number(request, "links", LINKS_SHOWN, GRAPH_MAX_LINKS)
    concept = await _owned(request, session, concept_id)
    around = await strongest_neighborhood(request.app.state.db.read, concept, shown)
    return Response(
        {
            "nodes": [
                {
                    "id": n.id,
                    "label": n.display_name,
                    "doc_freq": n.doc_freq,
                    "depth": 0 if n.id == concept_id else 1,
                }
                for n in around.nodes
            ],
            "edges": [{"source": e.source, "target": e.target, "weight": e.weight} for e in around.edges],
        },
        media_type="application/json",
    )
