"""What every hook call goes through before its answer is worked out, whichever the host and event:
the budget, the key (looked up inside the budget), the body size, the rate limits, the `read`
scope and the hooks' switch; and the `{}` answers, each naming its outcome in the
`Memoria-Hook-Outcome` header (`app.hooks.routes` describes them).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
from litestar import Request, Response
from litestar.exceptions import HTTPException
from litestar.status_codes import HTTP_200_OK

from app.auth.gate import Gate
from app.auth.middleware import bearer_key, client_host, missing_scope
from app.auth.scopes import READ
from app.auth.service import AuthUser
from app.core import deadline
from app.core.metrics import HookMetrics
from app.db.replica import act_for
from app.errors import TooManyRequests, database_unavailable
from app.hooks.settings import HookSettings
from app.memories.ledger import SessionLedger, session_key
from app.memories.redaction import credentials_in

log = logging.getLogger(__name__)

OUTCOME_HEADER = "Memoria-Hook-Outcome"

Answer = Callable[[AuthUser], Awaitable[Response[dict[str, Any]]]]
"""The work of one hook call once its caller is known and allowed; runs within the budget."""


def answer(outcome: str, body: dict[str, Any] | None = None) -> Response[dict[str, Any]]:
    return Response(body or {}, status_code=HTTP_200_OK, headers={OUTCOME_HEADER: outcome})


def ledger_for(
    pool: asyncpg.Pool, user: AuthUser, session_id: str | None, settings: HookSettings
) -> SessionLedger | None:
    """The session's ledger, or None: no usable session id, or the ledger switched off."""
    key = session_key(session_id)
    if key is not None and credentials_in(key):  # stored in the ledger: never a credential
        log.info("hook event whose session id holds what looks like a credential: no ledger")
        return None
    if key is None or settings.ledger_ttl_hours <= 0:
        if session_id is not None and key is None:  # the id itself is never logged
            log.info(
                "hook event with an unusable session id (%d characters): no ledger", len(str(session_id))
            )
        return None
    budget = settings.session_max_chars or None  # 0: no session budget
    return SessionLedger(pool, user.id, key, max(int(settings.ledger_ttl_hours * 3600), 1), budget)


def hook_metrics(request: Request[Any, Any, Any]) -> HookMetrics | None:
    """The app's hook metrics (`create_app` keeps them in its state), None for an app without them."""
    metrics = getattr(request.app.state, "metrics", None)
    return getattr(metrics, "hooks", None)


async def within_budget(
    request: Request[Any, Any, Any], settings: HookSettings, max_body_bytes: int, work: Answer
) -> Response[dict[str, Any]]:
    """What every hook call goes through: the budget, the key, the body size, the scope, the switch."""
    request_deadline = deadline.current()
    budget = deadline.Deadline.after(
        settings.budget_ms / 1000, started=request_deadline.started if request_deadline else None
    )
    try:
        key = bearer_key(request.headers.get("authorization", ""))  # no database asked
    except HTTPException:
        return answer("unauthorized")
    if len(await request.body()) > max_body_bytes:  # already read and decoded: it is only skipped
        return answer("too-large")
    admit = _admit(request.app.state.gate, request.app.state.db.write, key, client_host(request))
    try:
        # past the budget the work is cancelled and left to unwind: its clean-up may wait on the database
        return await deadline.within(_admitted(admit, settings, work), budget)
    except TimeoutError:
        return answer("timeout")


async def _admit(gate: Gate, pool: asyncpg.Pool, key: str, client: str | None) -> AuthUser:
    """The key's user, with the rate limits every `/v1` route applies (`app.auth.gate`)."""
    await gate.sweep_if_due(pool)
    return await gate.admit(pool, key, client)


async def _admitted(
    admit: Awaitable[AuthUser], settings: HookSettings, work: Answer
) -> Response[dict[str, Any]]:
    """The caller's answer, or `{}` naming why not: an unknown key, a rate limit, a key without the
    `read` scope, the hooks switched off, or a database that cannot tell who is calling."""
    try:
        user = await admit
    except TooManyRequests:
        return answer("rate-limited")
    except HTTPException:  # an unknown, revoked or expired key: `{}`, never a hook error on screen
        return answer("unauthorized")
    except Exception as exc:  # the database cannot tell us who this is: the prompt goes on without memories
        return failed("key lookup", exc)
    if missing_scope(user, READ) is not None:
        return answer(f"missing-scope:{READ}")
    if not settings.enabled:
        return answer("disabled")
    act_for(user.id, note_writes=False)  # its reads see the user's writes (app.db.replica)
    return await work(user)


def failed(step: str, exc: Exception) -> Response[dict[str, Any]]:
    """`{}` for a failed step: `timeout` or `unavailable` when the database is the cause, else `error`."""
    if isinstance(exc, TimeoutError):
        return answer("timeout")
    if database_unavailable(exc) is not None:
        log.warning("hook %s: the database is unavailable: %r", step, exc)
        return answer("unavailable")
    log.warning("hook %s failed", step, exc_info=exc)
    return answer("error")
