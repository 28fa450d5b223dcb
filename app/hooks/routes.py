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
"""

from __future__ import annotations

import logging
from typing import Any

import asyncpg
import msgspec
from litestar import Request, Response, Router, post
from litestar.di import NamedDependency, Provide
from litestar.exceptions import HTTPException
from litestar.params import FromQuery, JSONBody
from litestar.status_codes import HTTP_200_OK

from app.auth.middleware import bearer_key, user_for_key
from app.client.namespace import namespace_for_cwd
from app.core import deadline
from app.errors import ApiError, NotFound, database_unavailable
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
    """The fields we use; unknown ones are ignored because Claude Code adds fields over time."""

    prompt: str = ""
    cwd: str | None = None
    session_id: str | None = None
    transcript_path: str | None = None
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
    answer = _answer_prompt(request.app.state.db.write, key, data, recall, hook_settings, namespace)
    try:
        # past the budget the work is cancelled and left to unwind: its clean-up may wait on the database
        return await deadline.within(answer, budget)
    except TimeoutError:
        return _answer("timeout")


async def _answer_prompt(
    pool: asyncpg.Pool,
    key: str,
    data: UserPromptSubmitEvent,
    recall: RecallService,
    settings: HookSettings,
    namespace: str | None,
) -> Response[dict[str, Any]]:
    """The answer to one event; runs within the budget. Only an unknown key raises (401)."""
    try:
        user = await user_for_key(pool, key)
    except HTTPException:  # an unknown or revoked key: 401, as on every /v1 route
        raise
    except Exception as exc:  # the database cannot tell us who this is: the prompt goes on without memories
        return _failed("key lookup", exc)
    if not settings.enabled:
        return _answer("disabled")
    if data.hook_event_name not in (None, EVENT_NAME):
        return _answer("wrong-event")
    verdict = judge(data.prompt, settings.min_prompt_chars)
    if verdict.query is None:
        return _answer(f"skipped:{verdict.reason}")
    scope = namespace or namespace_for_cwd(data.cwd, settings.namespace_map, settings.default_namespace)
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
