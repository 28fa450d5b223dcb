"""`/healthz`: the process answers. `/readyz`: database reachable, schema at head, embedder loaded."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get
from litestar.status_codes import HTTP_200_OK, HTTP_503_SERVICE_UNAVAILABLE


@get("/healthz", tags=["health"], summary="Liveness: the process is up")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@get("/readyz", tags=["health"], summary="Readiness: database, migrations and embedder")
async def readyz(request: Request[Any, Any, Any]) -> Response[dict[str, Any]]:
    state = request.app.state
    checks: dict[str, Any] = {}
    try:
        revision = await state.db.write.fetchval("SELECT version_num FROM alembic_version")
        checks["database"] = "ok"
        checks["migrations"] = (
            "ok" if revision == state.head_revision else f"at {revision}, head is {state.head_revision}"
        )
    except Exception as exc:  # any failure means "not ready", never a 500
        checks["database"] = f"unreachable: {type(exc).__name__}"
        checks["migrations"] = "unknown"
    checks["embedder"] = "ok" if state.embedder_ready else "not loaded"
    ready = all(v == "ok" for v in checks.values())
    return Response(
        {"status": "ready" if ready else "not ready", "checks": checks},
        status_code=HTTP_200_OK if ready else HTTP_503_SERVICE_UNAVAILABLE,
    )
