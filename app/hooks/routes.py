"""`POST /v1/hooks/claude-code/user-prompt-submit`: Claude Code's `http` hook, answered in-process.

Claude Code posts the `UserPromptSubmit` event here before each prompt and waits for the answer,
so this route never makes a prompt slower than the configured budget and never fails it: every
outcome other than "memories found" is an empty `{}` with status 200 (a non-2xx answer would be
shown to the person as a hook error). The outcome is named in the `Memoria-Hook-Outcome` header,
which Claude Code ignores and logs, tests and `memoria bench hook` read.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import msgspec
from litestar import Request, Response, Router, post
from litestar.di import NamedDependency, Provide
from litestar.params import FromQuery, JSONBody
from litestar.status_codes import HTTP_200_OK

from app.auth import AuthUser
from app.client.namespace import namespace_for_cwd
from app.errors import ApiError, NotFound
from app.hooks.context import render
from app.hooks.policy import judge
from app.hooks.settings import HookSettings
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
    request: Request[AuthUser, int, Any],
    data: JSONBody[UserPromptSubmitEvent],
    recall: NamedDependency[RecallService],
    hook_settings: NamedDependency[HookSettings],
    namespace: FromQuery[str | None] = None,
) -> Response[dict[str, Any]]:
    settings = hook_settings
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
        async with asyncio.timeout(settings.budget_ms / 1000):
            found = await recall.recall(request.user.id, ask)
    except TimeoutError:
        return _answer("timeout")
    except NotFound:
        return _answer("no-namespace")
    except ApiError as exc:
        return _answer(f"rejected:{exc.status_code}")
    except Exception:  # a broken recall must not fail the person's prompt
        log.warning("hook recall failed", exc_info=True)
        return _answer("error")
    hits = [hit for hit in found.results if hit.score >= settings.min_score]
    text, included = render(scope, hits, settings.max_context_chars)
    if not included:
        return _answer("no-results")
    context = {"hookEventName": EVENT_NAME, "additionalContext": text}
    return _answer(f"injected:{included}", {"hookSpecificOutput": context})


def hook_router(settings: HookSettings) -> Router:
    """Mounted inside the `/v1` router, so it shares its API-key middleware and `recall` dependency."""

    def provide_settings() -> HookSettings:
        return settings

    return Router(
        path="/hooks/claude-code",
        route_handlers=[user_prompt_submit],
        dependencies={"hook_settings": Provide(provide_settings, sync_to_thread=False)},
    )
