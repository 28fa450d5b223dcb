"""The hook routes, answered in-process, the same two for every host (`app.hooks.hosts`: Claude Code,
Codex CLI, ...), under `/v1/hooks/<host>/`:

- `POST /v1/hooks/<host>/user-prompt-submit`: the prompt event (Claude Code's and Codex's
  `UserPromptSubmit`), before each prompt; the answer is the memories recalled for the prompt
  (curated first, captured episodes only when they score near the best hit and clear the relevance
  floor themselves);
- `POST /v1/hooks/<host>/session-start`: the `SessionStart` event (sent by the command hook:
  Claude Code runs no http hook there); the answer is the namespace's pinned and most important
  memories, aware of the event's `source` (`app.hooks.start_context`).

The host decides the event names the routes accept, the shape of the answer and the most context
one answer carries (its documented limit, less a margin); an unknown host is a 404. What every call
goes through first (budget, key, scope, switch) is `app.hooks.call`.

The host waits for the answer, so these routes never make a session slower than the configured
budget and never fail it: every outcome other than "memories found" is an empty `{}` with status
200 (a non-2xx answer is shown to the person as a hook error). That includes a missing or unknown
key (outcome `unauthorized`) and a body over the server's normal size limit (a pasted log: outcome
`too-large`; these routes accept up to `MAX_HOOK_BODY_BYTES` so that such a prompt is skipped rather
than refused with a 413). The outcome is named in the `Memoria-Hook-Outcome` header, which Claude
Code ignores and logs, tests and `memoria bench hook` read.

The budget (`MEMORIA_HOOKS__BUDGET_MS`) runs from the request's arrival and covers the API-key lookup
too: these routes are left out of the `/v1` key middleware and look the key up themselves, inside
the budgeted block, so a hung or unreachable database costs the prompt the budget and nothing more.

The namespace comes from the `namespace` query parameter (the command hook computes it from the
git root of the session's directory on the client's machine; a project install writes it into the
hook URL), else the configured `default_namespace`, else there is nothing to recall. The event's
`cwd` is never read: resolving a client's path on the server's filesystem would tell a client which
paths exist here (a git checkout answered `repo:<name>`, `/etc` nothing).

Both routes keep the per-session ledger (`app.memories.ledger`) when the event carries a usable
`session_id`: a memory the session was given (at its start, or by an earlier prompt) is not
injected into it again, and the next best memory it has not seen takes the slot; and what both
inject comes out of one character budget per session (`MEMORIA_HOOKS__SESSION_MAX_CHARS`). An event
without one, or with one the ledger refuses (too long, odd characters), is served as before,
without them.

A prompt gets nothing, and says why in its outcome, when it names no topic (`skipped:<reason>`,
`app.hooks.policy`), when no recalled memory clears the relevance floor or only episodes that do
not clear it themselves were picked (`below-floor`, `app.hooks.floor`), when the session was given
every memory found (`all-seen`) or its budget is spent (`budget-spent`); the metric
`memoria_hook_prompts_without_context` counts each reason.
"""

from __future__ import annotations

import logging
from typing import Any

import asyncpg
import msgspec
from litestar import Request, Response, Router, post
from litestar.di import NamedDependency, Provide
from litestar.handlers import HTTPRouteHandler
from litestar.params import FromQuery, JSONBody
from litestar.status_codes import HTTP_200_OK

from app.auth.service import AuthUser
from app.core.metrics import HookMetrics
from app.errors import ApiError, NotFound
from app.hooks.call import OUTCOME_HEADER, answer, failed, hook_metrics, ledger_for, within_budget
from app.hooks.context import layout, pick, without_bare_questions
from app.hooks.floor import relevance_floor
from app.hooks.hosts import CLAUDE_CODE, HOSTS, Host
from app.hooks.policy import judge
from app.hooks.settings import HookSettings
from app.hooks.start_context import session_start_context
from app.memories.ledger import SessionLedger
from app.middleware import DEADLINE_ANSWER
from app.recall.schemas import RecallHit, RecallRequest
from app.recall.service import RecallService

log = logging.getLogger(__name__)

__all__ = ["OUTCOME_HEADER", "hook_router", "hook_routers"]
MAX_HOOK_BODY_BYTES = 8 * 1024 * 1024
"""Largest body the hook routes read (past it: 413). Over the server's normal limit a body is read
only to be answered `{}` (`too-large`): a person pasting a big log must not see a hook error."""


class UserPromptSubmitEvent(msgspec.Struct, kw_only=True):
    """The fields we use; unknown ones (`cwd` and `transcript_path` among them: paths on the
    client's machine, which the server never resolves) are ignored, and Claude Code adds fields over
    time."""

    prompt: str = ""
    session_id: str | None = None
    hook_event_name: str | None = None


class SessionStartEvent(msgspec.Struct, kw_only=True):
    """The SessionStart fields we use; `source` is startup, resume, clear or compact (an unknown one
    is served like startup). Unknown fields are ignored, paths never resolved."""

    session_id: str | None = None
    source: str | None = None
    hook_event_name: str | None = None


def _context(host: Host, event_name: str, text: str, included: int) -> Response[dict[str, Any]]:
    return answer(f"injected:{included}", host.context(event_name, text))


async def user_prompt_submit(
    request: Request[Any, Any, Any],
    data: JSONBody[UserPromptSubmitEvent],
    recall: NamedDependency[RecallService],
    hook_settings: NamedDependency[HookSettings],
    hook_max_body_bytes: NamedDependency[int],
    hook_host: NamedDependency[Host],
    namespace: FromQuery[str | None] = None,
) -> Response[dict[str, Any]]:
    ledger_pool: asyncpg.Pool = request.app.state.db.write
    metrics = hook_metrics(request)

    async def work(user: AuthUser) -> Response[dict[str, Any]]:
        ledger = ledger_for(ledger_pool, user, data.session_id, hook_settings)
        return await _answer_prompt(
            user, data, recall, hook_settings, namespace, ledger, metrics, host=hook_host
        )

    return await within_budget(request, hook_settings, hook_max_body_bytes, work)


async def _answer_prompt(
    user: AuthUser,
    data: UserPromptSubmitEvent,
    recall: RecallService,
    settings: HookSettings,
    namespace: str | None,
    ledger: SessionLedger | None = None,
    metrics: HookMetrics | None = None,
    host: Host = CLAUDE_CODE,
) -> Response[dict[str, Any]]:
    """The answer to one prompt event from an allowed caller of `host`."""

    def left_alone(reason: str, outcome: str) -> Response[dict[str, Any]]:
        if metrics is not None:
            metrics.without_context(reason)
        return answer(outcome)

    if data.hook_event_name not in (None, host.prompt_event):
        return answer("wrong-event")
    verdict = judge(data.prompt, settings.min_prompt_chars)
    if verdict.query is None:
        return left_alone("trivial", f"skipped:{verdict.reason}")
    scope = namespace or settings.default_namespace  # never derived from the event's paths
    if scope is None:
        return answer("no-namespace")
    floor = relevance_floor(settings)
    # Twice the lines wanted, both kinds: episodes near the top must not push curated memories out
    # of the candidates (`pick` puts curated ones first and keeps only the strongest episodes).
    # With a ledger, as many again: the memories the session already has are left out of the
    # candidates, and the next best ones it has not seen fill their slots. The floor reads the
    # hits' own signals (`explain`).
    wanted = (3 if ledger is not None else 2) * settings.max_results
    ask = RecallRequest(query=verdict.query, namespace=scope, limit=min(wanted, 100), explain=floor.enabled)
    try:
        found = await recall.recall(user.id, ask)
    except NotFound:
        return answer("no-namespace")
    except ApiError as exc:
        return answer(f"rejected:{exc.status_code}")
    except Exception as exc:  # a broken recall must not fail the person's prompt
        return failed("recall", exc)
    hits = pick(found.results, len(found.results), settings.min_score, settings.episode_min_score_ratio)
    if not hits:
        return left_alone("no-results", "no-results")
    # the answer clears the floor as a whole, then each episode must clear it on its own
    hits = floor.without_far_episodes(hits, found.results) if floor.clears(found.results) else []
    hits = without_bare_questions(hits)
    if not hits:
        return left_alone("floor", "below-floor")
    max_chars = min(settings.max_context_chars, host.max_context_chars)
    text, included, why_not = await _shown(
        ledger, scope, hits, settings.max_results, max_chars, host.max_context_bytes
    )
    if not included:
        return left_alone(why_not, NO_CONTEXT_OUTCOMES[why_not])
    if metrics is not None:
        metrics.injected("prompt", len(text))
    return _context(host, host.prompt_event, text, len(included))


NO_CONTEXT_OUTCOMES = {"seen": "all-seen", "budget": "budget-spent", "no-results": "no-results"}
"""The outcome header of a prompt left without context by the ledger, by metric reason."""


async def _shown(
    ledger: SessionLedger | None,
    scope: str,
    hits: list[RecallHit],
    limit: int,
    max_chars: int,
    max_bytes: int | None = None,
) -> tuple[str, list[RecallHit], str]:
    """(text, the hits it shows, why none when none): the first `max_results` hits the session has
    not been given, within the answer's and what is left of the session's character budget, now
    recorded as given. Without a ledger, or when it cannot be written, the first `max_results`
    hits within the answer's budget (the prompt still gets its memories, perhaps one it had)."""
    if ledger is None:
        text, included = layout(scope, hits[:limit], max_chars, max_bytes)
        return text, included, "no-results"
    by_id = {hit.id: hit for hit in hits}

    def arrange(unseen: list[int], remaining: int | None) -> tuple[str, list[int]]:
        room = max_chars if remaining is None else min(max_chars, remaining)
        text, shown = layout(scope, [by_id[public_id] for public_id in unseen[:limit]], room, max_bytes)
        return text, [hit.id for hit in shown]

    try:
        given = await ledger.give([hit.id for hit in hits], arrange)
    except Exception:  # cancellation (the budget) is no Exception: it still ends the request
        log.warning("hook ledger: recording the injected memories failed; served without it", exc_info=True)
        text, included = layout(scope, hits[:limit], max_chars, max_bytes)
        return text, included, "no-results"
    why_not = "seen" if not given.unseen else "budget"
    return given.text, [by_id[public_id] for public_id in given.included], why_not


async def session_start(
    request: Request[Any, Any, Any],
    data: JSONBody[SessionStartEvent],
    hook_settings: NamedDependency[HookSettings],
    hook_max_body_bytes: NamedDependency[int],
    hook_host: NamedDependency[Host],
    namespace: FromQuery[str | None] = None,
) -> Response[dict[str, Any]]:
    pool: asyncpg.Pool = request.app.state.db.read
    ledger_pool: asyncpg.Pool = request.app.state.db.write
    metrics = hook_metrics(request)

    async def work(user: AuthUser) -> Response[dict[str, Any]]:
        ledger = ledger_for(ledger_pool, user, data.session_id, hook_settings)
        return await _answer_start(
            user, data, pool, hook_settings, namespace, ledger, metrics, host=hook_host
        )

    return await within_budget(request, hook_settings, hook_max_body_bytes, work)


async def _answer_start(
    user: AuthUser,
    data: SessionStartEvent,
    pool: asyncpg.Pool,
    settings: HookSettings,
    namespace: str | None,
    ledger: SessionLedger | None = None,
    metrics: HookMetrics | None = None,
    host: Host = CLAUDE_CODE,
) -> Response[dict[str, Any]]:
    """The answer to one SessionStart event from an allowed caller of `host`."""
    if data.hook_event_name not in (None, host.start_event):
        return answer("wrong-event")
    scope = namespace or settings.default_namespace  # never derived from the event's paths
    if scope is None:
        return answer("no-namespace")
    try:
        text, included = await session_start_context(
            pool,
            user.id,
            scope,
            data.source,
            data.session_id,
            min(settings.session_start_max_chars, host.max_context_chars),
            ledger,
            startup_episodes=settings.start_episodes,
            max_bytes=host.max_context_bytes,
        )
    except NotFound:
        return answer("no-namespace")
    except ApiError as exc:  # a namespace name the API refuses
        return answer(f"rejected:{exc.status_code}")
    except Exception as exc:  # a broken query must not fail the session's start
        return failed("session start", exc)
    if not included:
        return answer("no-memories")
    if metrics is not None:
        metrics.injected("session-start", len(text))
    return _context(host, host.start_event, text, included)


def _handlers(host: Host) -> list[HTTPRouteHandler]:
    """The two hook routes of `host`: the same functions for every host, summaries naming it."""
    prompt = post(
        "/user-prompt-submit",
        status_code=HTTP_200_OK,
        tags=["hooks"],
        summary=f"{host.label} {host.prompt_event} hook: recalled memories as additionalContext, or {{}}",
    )(user_prompt_submit)
    start = post(
        "/session-start",
        status_code=HTTP_200_OK,
        tags=["hooks"],
        summary=f"{host.label} {host.start_event} hook: the namespace's pinned and most important "
        "memories, or {}",
    )(session_start)
    return [prompt, start]


def hook_router(
    settings: HookSettings, max_body_bytes: int = 1024 * 1024, host: Host = CLAUDE_CODE
) -> Router:
    """`/hooks/<host>`: the host's two hook routes. Mounted inside the `/v1` router for its `recall`
    dependency; its API-key middleware skips these routes, which look the key up within their
    budget. At the request deadline (a safety net: the budget is far shorter) the answer is `{}`
    too, never a 503 a person would see as a hook error.

    `max_body_bytes` is the server's normal body limit (`MEMORIA_SERVER__MAX_BODY_BYTES`): these
    routes read bodies up to `MAX_HOOK_BODY_BYTES` (or that limit, if larger) and answer `{}` to any
    over the normal one."""

    def provide_settings() -> HookSettings:
        return settings

    def provide_max_body_bytes() -> int:
        return max_body_bytes

    def provide_host() -> Host:
        return host

    return Router(
        path=f"/hooks/{host.name}",
        route_handlers=_handlers(host),
        dependencies={
            "hook_settings": Provide(provide_settings, sync_to_thread=False),
            "hook_max_body_bytes": Provide(provide_max_body_bytes, sync_to_thread=False),
            "hook_host": Provide(provide_host, sync_to_thread=False),
        },
        request_max_body_size=max(MAX_HOOK_BODY_BYTES, max_body_bytes),
        # With the `/v1` router's scheme this reads "the API key, or nothing": the key is what
        # finds memories, and without one the answer is `{}` with 200, never a 401.
        security=[{}],
        opt={"exclude_from_auth": True, DEADLINE_ANSWER: lambda: answer("deadline")},
    )


def hook_routers(settings: HookSettings, max_body_bytes: int = 1024 * 1024) -> list[Router]:
    """One `hook_router` per host of `app.hooks.hosts.HOSTS`."""
    return [hook_router(settings, max_body_bytes, host) for host in HOSTS.values()]
