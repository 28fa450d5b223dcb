"""`/healthz`: the process answers. `/readyz`: database reachable, schema at head, embedder loaded, warm."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get
from litestar.openapi import ResponseSpec
from litestar.status_codes import HTTP_200_OK, HTTP_503_SERVICE_UNAVAILABLE

from app.core import deadline

# /readyz answers within a second whatever PostgreSQL does: a probe that hangs tells an orchestrator
# nothing, and a stopped server never answers the check's statement. Half a second leaves the other
# half for a busy machine; a database slower than this on `SELECT version_num` cannot serve the hook.
READY_DATABASE_TIMEOUT_S = 0.5


@get("/healthz", tags=["health"], summary="Liveness: the process is up")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@get(
    "/readyz",
    tags=["health"],
    summary="Readiness: database, migrations and embedder",
    responses={
        HTTP_503_SERVICE_UNAVAILABLE: ResponseSpec(
            dict[str, Any],
            description="Not ready: the same report, naming the check that failed",
            generate_examples=False,
        )
    },
)
async def readyz(request: Request[Any, Any, Any]) -> Response[dict[str, Any]]:
    state = request.app.state
    checks: dict[str, Any] = {}
    try:
        # Bounded, and not waited for past the bound: on a hung server even giving up waits on it.
        revision = await deadline.within(
            state.db.write.fetchval("SELECT version_num FROM alembic_version"),
            deadline.Deadline.after(READY_DATABASE_TIMEOUT_S),
        )
        checks["database"] = "ok"
        checks["migrations"] = (
            "ok" if revision == state.head_revision else f"at {revision}, head is {state.head_revision}"
        )
    except TimeoutError:  # connected or not, nothing came back: hung, or too busy to serve anyway
        checks["database"] = f"hung: no answer within {READY_DATABASE_TIMEOUT_S:g} s"
        checks["migrations"] = "unknown"
    except Exception as exc:  # any failure means "not ready", never a 500
        checks["database"] = f"unreachable: {type(exc).__name__}"
        checks["migrations"] = "unknown"
    checks["embedder"] = "ok" if state.embedder_ready else "not loaded"
    if state.warmup.warming:  # caches cold (start, PostgreSQL restarted): not ready until warmed
        checks["warmup"] = "warming up"
    ready = all(v == "ok" for v in checks.values())
    return Response(
        {"status": "ready" if ready else "not ready", "checks": checks},
        status_code=HTTP_200_OK if ready else HTTP_503_SERVICE_UNAVAILABLE,
    )
