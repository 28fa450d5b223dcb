"""`/healthz`: the process answers. `/readyz`: database reachable, schema at head, embedder loaded, warm.

`/readyz` tells everyone only whether the service is ready; which check failed, and how, is for a
key with the `admin` scope (app/health/admin.py).
"""

from __future__ import annotations

import asyncio
from typing import Any

from litestar import Request, Response, get
from litestar.datastructures import State
from litestar.openapi import ResponseSpec
from litestar.status_codes import HTTP_200_OK, HTTP_503_SERVICE_UNAVAILABLE

from app.auth.middleware import client_host
from app.core import deadline
from app.errors import RETRY_AFTER_S
from app.health.admin import RecentAdmins, bearer_key, is_admin

# /readyz answers within a second whatever PostgreSQL does: a probe that hangs tells an orchestrator
# nothing, and a stopped server never answers the check's statement. Half a second leaves the other
# half for a busy machine; a database slower than this on `SELECT version_num` cannot serve the hook.
# The admin-key lookup runs beside the check, under the same bound.
READY_DATABASE_TIMEOUT_S = 0.5


@get("/healthz", tags=["health"], summary="Liveness: the process is up")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


async def readiness_checks(state: State, limit: deadline.Deadline) -> dict[str, Any]:
    """Each readiness check by name: "ok" or what is wrong (`/readyz` details, the UI's health page)."""
    checks: dict[str, Any] = {}
    try:
        # Bounded, and not waited for past the bound: on a hung server even giving up waits on it.
        revision = await deadline.within(
            state.db.write.fetchval("SELECT version_num FROM alembic_version"), limit
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
    return checks


def _recent_admins(state: State) -> RecentAdmins:
    """This app's memory of confirmed admin keys, made on first use (no await in between: no race)."""
    recent: RecentAdmins | None = getattr(state, "readyz_admins", None)
    if recent is None:
        recent = state.readyz_admins = RecentAdmins()
    return recent


@get(
    "/readyz",
    tags=["health"],
    summary="Readiness: database, migrations and embedder (which check failed: admin keys only)",
    responses={
        HTTP_503_SERVICE_UNAVAILABLE: ResponseSpec(
            dict[str, Any],
            description="Not ready; with an admin key, the same report naming the check that failed",
            generate_examples=False,
        )
    },
)
async def readyz(request: Request[Any, Any, Any]) -> Response[dict[str, Any]]:
    state = request.app.state
    limit = deadline.Deadline.after(READY_DATABASE_TIMEOUT_S)
    key = bearer_key(request.headers.get("authorization", ""))
    client = client_host(request) if key is not None else None
    admin_check = is_admin(state.db.write, state.gate, key, client, _recent_admins(state), limit)
    checks, admin = await asyncio.gather(readiness_checks(state, limit), admin_check)
    ready = all(v == "ok" for v in checks.values())
    body: dict[str, Any] = {"status": "ready" if ready else "not ready"}
    if admin:
        body["checks"] = checks
        if state.db.replica is not None:  # informational: a lagging or dead replica is routed around
            body["replica"] = state.db.replica.details()
    return Response(
        body,
        status_code=HTTP_200_OK if ready else HTTP_503_SERVICE_UNAVAILABLE,
        headers=None if ready else {"Retry-After": str(RETRY_AFTER_S)},
    )
