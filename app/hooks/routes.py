"""`POST /v1/hooks/claude-code/user-prompt-submit`: Claude Code's `http` hook, answered in-process.

Claude Code posts the `UserPromptSubmit` event here before each prompt and waits for the answer,
so this route never makes a prompt slower than the configured budget and never fails it: every
outcome other than "memories found" is an empty `{}` with status 200 (a non-2xx answer would be
shown to the person as a hook error). The outcome is named in the `Memoria-Hook-Outcome` header,
which Claude Code ignores and logs, tests and `memoria bench hook` read.

The budget (`MEMORIA_HOOKS__BUDGET_MS`) runs from the request's arrival and covers the API-key lookup
too: this route is left out of the `/v1` key middleware and looks the key up itself, inside the
budgeted block, so a hung or unreachable database costs the prompt the budget and nothing more. A
missing or unknown key still answers 401, as on every `/v1` route.

The namespace comes from the `namespace` query parameter (the command hook computes it from the
git root of the session's directory on the client's machine; a project install writes it into the
hook URL), else the configured `default_namespace`, else there is nothing to recall. The event's
`cwd` is never read: resolving a client's path on the server's filesystem would tell a client which
paths exist here (a git checkout answered `repo:<name>`, `/etc` nothing).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Any

import asyncpg
import msgspec
from litestar import Request, Response, Router, post
from litestar.di import NamedDependency, Provide
from litestar.exceptions import HTTPException
from litestar.params import FromQuery, JSONBody
from litestar.status_codes import HTTP_200_OK

from app.auth.gate import Gate
from app.auth.middleware import bearer_key, client_host, missing_scope
from app.auth.scopes import READ
from app.auth.service import AuthUser
from app.core import deadline
from app.errors import ApiError, NotFound, TooManyRequests, database_unavailable
from app.hooks.context import render
from app.hooks.policy import judge
from app.hooks.settings import HookSettings
from app.middleware import DEADLINE_ANSWER
from app.recall.schemas import RecallRequest
from app.recall.service import RecallService

log = logging.getLogger(__name__)

OUTCOME_HEADER = "Memoria-Hook-Outcome"
EVENT_NAME = "UserPromptSubmit"


class UserPromptSubmitEvent(msgspec.Struct, kw_only=True):
    """The fields we use; unknown ones (`cwd` and `transcript_path` among them: paths on the
    client's machine, which the server never resolves) are ignored, and Claude Code adds fields over
    time."""

    prompt: str = ""
    session_id: str | None = None
    hook_event_name: str | None = None


def _answer(outcome: str, body: dict[str, Any] | None = None) -> Response[dict[str, Any]]:
    return Response(body or {}, status_code=HTTP_200_OK, headers={OUTCOME_HEADER: outcome})


@post(
    "/user-prompt-submit",
    status_code=HTTP_200_OK,
    tags=["hooks"],
    summary="Claude Code UserPromptSubmit hook: recalled memories as additionalContext, or {}",
)
async def user_prompt_submit(
    request: Request[Any, Any, Any],
    data: JSONBody[UserPromptSubmitEvent],
    recall: NamedDependency[RecallService],
    hook_settings: NamedDependency[HookSettings],
    namespace: FromQuery[str | None] = None,
) -> Response[dict[str, Any]]:
    request_deadline = deadline.current()
    budget = deadline.Deadline.after(
        hook_settings.budget_ms / 1000, started=request_deadline.started if request_deadline else None
    )
    key = bearer_key(request.headers.get("authorization", ""))  # 401 without a key, before any wait
    admit = _admit(request.app.state.gate, request.app.state.db.write, key, client_host(request))
    answer = _answer_prompt(admit, data, recall, hook_settings, namespace)
    try:
        # past the budget the work is cancelled and left to unwind: its clean-up may wait on the database
        return await deadline.within(answer, budget)
    except TimeoutError:
        return _answer("timeout")


async def _admit(gate: Gate, pool: asyncpg.Pool, key: str, client: str | None) -> AuthUser:
    """The key's user, with the rate limits every `/v1` route applies (`app.auth.gate`)."""
    await gate.sweep_if_due(pool)
    return await gate.admit(pool, key, client)


async def _answer_prompt(
    admit: Awaitable[AuthUser],
    data: UserPromptSubmitEvent,
    recall: RecallService,
    settings: HookSettings,
    namespace: str | None,
) -> Response[dict[str, Any]]:
    """The answer to one event; runs within the budget. Only an unknown key raises (401); a rate
    limit or a key without the `read` scope answers `{}` like every other refusal."""
    try:
        user = await admit
    except TooManyRequests:
        return _answer("rate-limited")
    except HTTPException:  # an unknown or revoked key: 401, as on every /v1 route
        raise
    except Exception as exc:  # the database cannot tell us who this is: the prompt goes on without memories
        return _failed("key lookup", exc)
    if missing_scope(user, READ) is not None:
        return _answer(f"missing-scope:{READ}")
    if not settings.enabled:
        return _answer("disabled")
    if data.hook_event_name not in (None, EVENT_NAME):
        return _answer("wrong-event")
    verdict = judge(data.prompt, settings.min_prompt_chars)
    if verdict.query is None:
        return _answer(f"skipped:{verdict.reason}")
    scope = namespace or settings.default_namespace  # never derived from the event's paths
    if scope is None:
        return _answer("no-namespace")
    ask = RecallRequest(query=verdict.query, namespace=scope, limit=settings.max_results)
    try:
        found = await recall.recall(user.id, ask)
    except NotFound:
        return _answer("no-namespace")
    except ApiError as exc:
        return _answer(f"rejected:{exc.status_code}")
    except Exception as exc:  # a broken recall must not fail the person's prompt
        return _failed("recall", exc)
    hits = [hit for hit in found.results if hit.score >= settings.min_score]
    text, included = render(scope, hits, settings.max_context_chars)
    if not included:
        return _answer("no-results")
    context = {"hookEventName": EVENT_NAME, "additionalContext": text}
    return _answer(f"injected:{included}", {"hookSpecificOutput": context})


def _failed(step: str, exc: Exception) -> Response[dict[str, Any]]:
    """`{}` for a failed step: `timeout` or `unavailable` when the database is the cause, else `error`."""
    if isinstance(exc, TimeoutError):
        return _answer("timeout")
    if database_unavailable(exc) is not None:
        log.warning("hook %s: the database is unavailable: %r", step, exc)
        return _answer("unavailable")
    log.warning("hook %s failed", step, exc_info=exc)
    return _answer("error")


def hook_router(settings: HookSettings) -> Router:
    """Mounted inside the `/v1` router for its `recall` dependency; its API-key middleware skips this
    route, which looks the key up within its budget. At the request deadline (a safety net: the budget
    is far shorter) the answer is `{}` too, never a 503 a person would see as a hook error."""

    def provide_settings() -> HookSettings:
        return settings

    return Router(
        path="/hooks/claude-code",
        route_handlers=[user_prompt_submit],
        dependencies={"hook_settings": Provide(provide_settings, sync_to_thread=False)},
        opt={"exclude_from_auth": True, DEADLINE_ANSWER: lambda: _answer("deadline")},
    )
