"""The namespaces page (what is in each, and who shares what) and the health page (readiness, the
job queue, the embedder, recent recall latency)."""

from __future__ import annotations

from litestar import get
from litestar.response import Template

from app.core import deadline
from app.health import READY_DATABASE_TIMEOUT_S, readiness_checks
from app.namespaces import namespace_overview
from app.namespaces.shares import shares_granted, shares_received
from app.observability.collectors import JOB_STATS_SQL
from app.ui.web import Session, UiRequest, page


@get("/namespaces", include_in_schema=False)
async def namespaces_page(request: UiRequest, session: Session) -> Template:
    db = request.app.state.db.read
    return page(
        request,
        "namespaces.html",
        session,
        namespaces=await namespace_overview(db, session.user.id),
        granted=await shares_granted(db, session.user.id),
        received=await shares_received(db, session.user.id),
    )


@get("/health", include_in_schema=False)
async def health_page(request: UiRequest, session: Session) -> Template:
    state = request.app.state
    checks = await readiness_checks(state, deadline.Deadline.after(READY_DATABASE_TIMEOUT_S))
    jobs = await state.db.write.fetch(JOB_STATS_SQL)
    embedder = getattr(state, "embedder", None)
    return page(
        request,
        "health.html",
        session,
        checks=checks,
        ready=all(value == "ok" for value in checks.values()),
        jobs=jobs,
        queued=sum(row["jobs"] for row in jobs if row["state"] == "queued"),
        embedder=embedder.model_id if embedder is not None else "not loaded",
        recall=state.metrics.recall.recent_ms(),
    )
