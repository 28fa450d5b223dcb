"""The recall page: the API's recall with `explain` on, drawn so a person sees which leg found what.

A GET form (the query is in the address, so a result page can be bookmarked, reloaded, shared with
oneself). Each hit shows its three legs side by side: a leg that ranked it is drawn filled with its
rank, a leg that did not is drawn hollow; the fused and final scores follow. A hit that stands for
older versions it supersedes names them (`replaces`), a fix that came along with its problem names
the problem (`came_with`); with "show superseded", an older version is marked with its successor.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import get
from litestar.di import NamedDependency
from litestar.response import Template

from app.errors import ApiError
from app.namespaces import namespace_names
from app.recall import RecallService
from app.recall.legs import LEG_NAMES
from app.recall.legs import LEGS as LEG_SPECS
from app.recall.schemas import RecallRequest
from app.ui.forms import FormError
from app.ui.web import Session, UiRequest, page

LEGS = LEG_NAMES
KINDS = ("memory", "episode")
FIELDS = ("q", "namespace", "limit", "category", "tags", "kind", "superseded", *(f"w_{leg}" for leg in LEGS))
MAX_WEIGHT = 10.0


def _number(text: str, label: str, low: float, high: float) -> float:
    try:
        value = float(text)
    except ValueError:
        raise FormError(f"{label}: a number from {low:g} to {high:g}") from None
    if not low <= value <= high:
        raise FormError(f"{label}: a number from {low:g} to {high:g}")
    return value


def recall_request(form: dict[str, str]) -> RecallRequest:
    """The form as the API's `RecallRequest` (its own validation applies on top)."""
    weights = {
        leg.name: _number(form[f"w_{leg.name}"], f"{leg.label} weight", 0.0, MAX_WEIGHT)
        for leg in LEG_SPECS
        if form[f"w_{leg.name}"]
    }
    limit = int(_number(form["limit"] or "10", "Limit", 1, 100))
    data: dict[str, Any] = {"query": form["q"], "limit": limit, "explain": True}
    if form["namespace"]:
        data["namespace"] = form["namespace"]
    filters: dict[str, Any] = {}
    if form["category"]:
        filters["category"] = form["category"]
    if tags := [t.strip() for t in form["tags"].split(",") if t.strip()]:
        filters["tags"] = tags
    if form["kind"]:
        if form["kind"] not in KINDS:
            raise FormError("Kind: memory or episode")
        filters["kinds"] = [form["kind"]]
    if form["superseded"] in {"1", "on", "true"}:
        filters["include_superseded"] = True  # older versions too, each marked with its successor
    if filters:
        data["filters"] = filters
    if weights:
        data["weights"] = weights
    try:
        return msgspec.convert(data, RecallRequest)
    except msgspec.ValidationError as exc:
        raise FormError(str(exc)) from None


@get("/recall", include_in_schema=False)
async def recall_page(
    request: UiRequest, session: Session, recall: NamedDependency[RecallService]
) -> Template:
    query = request.query_params
    form = {name: query.get(name, "").strip() for name in FIELDS}
    namespaces = await namespace_names(request.app.state.db.read, session.user.id)
    result, error = None, ""
    if form["q"]:
        try:
            result = await recall.recall(session.user.id, recall_request(form))
        except (FormError, ApiError) as exc:
            error = exc.detail if isinstance(exc, ApiError) else str(exc)
    return page(
        request,
        "recall.html",
        session,
        status_code=400 if error else 200,
        form=form,
        namespaces=namespaces,
        result=result,
        error=error,
        legs=LEGS,
    )
