"""The Claude Code hook routes, answered in-process:

- `POST /v1/hooks/claude-code/user-prompt-submit`: the `UserPromptSubmit` event, before each prompt;
  the answer is the memories recalled for the prompt (curated first, captured episodes only when
  they score near the best hit and clear the relevance floor themselves);
- `POST /v1/hooks/claude-code/session-start`: the `SessionStart` event (sent by the command hook:
  Claude Code runs no http hook there); the answer is the namespace's pinned and most important
  memories, aware of the event's `source` (`app.hooks.start_context`).

Claude Code waits for the answer, so these routes never make a session slower than the configured
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
from collections.abc import Awaitable, Callable
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
from app.core.metrics import HookMetrics
from app.errors import ApiError, NotFound, TooManyRequests, database_unavailable
from app.hooks.context import layout, pick, without_bare_questions
from app.hooks.floor import relevance_floor
from app.hooks.policy import judge
from app.hooks.settings import HookSettings
from app.hooks.start_context import session_start_context
from app.memories.ledger import SessionLedger, session_key
from app.memories.redaction import credentials_in
from app.middleware import DEADLINE_ANSWER
from app.recall.schemas import RecallHit, RecallRequest
from app.recall.service import RecallService

log = logging.getLogger(__name__)

OUTCOME_HEADER = "Memoria-Hook-Outcome"
EVENT_NAME = "UserPromptSubmit"
SESSION_START = "SessionStart"
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


def _ledger(
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


def _metrics(request: Request[Any, Any, Any]) -> HookMetrics | None:
    """The app's hook metrics (`create_app` keeps them in its state), None for an app without them."""
    metrics = getattr(request.app.state, "metrics", None)
    return getattr(metrics, "hooks", None)


def _answer(outcome: str, body: dict[str, Any] | None = None) -> Response[dict[str, Any]]:
    return Response(body or {}, status_code=HTTP_200_OK, headers={OUTCOME_HEADER: outcome})


def _context(event_name: str, text: str, included: int) -> Response[dict[str, Any]]:
    context = {"hookEventName": event_name, "additionalContext": text}
    return _answer(f"injected:{included}", {"hookSpecificOutput": context})


Answer = Callable[[AuthUser], Awaitable[Response[dict[str, Any]]]]
"""The work of one hook call once its caller is known and allowed; runs within the budget."""


async def _within_budget(
    request: Request[Any, Any, Any], settings: HookSettings, max_body_bytes: int, answer: Answer
) -> Response[dict[str, Any]]:
    """What every hook call goes through: the budget, the key, the body size, the scope, the switch."""
    request_deadline = deadline.current()
    budget = deadline.Deadline.after(
        settings.budget_ms / 1000, started=request_deadline.started if request_deadline else None
    )
    try:
        key = bearer_key(request.headers.get("authorization", ""))  # no database asked
    except HTTPException:
        return _answer("unauthorized")
    if len(await request.body()) > max_body_bytes:  # already read and decoded: it is only skipped
        return _answer("too-large")
    admit = _admit(request.app.state.gate, request.app.state.db.write, key, client_host(request))
    try:
        # past the budget the work is cancelled and left to unwind: its clean-up may wait on the database
        return await deadline.within(_admitted(admit, settings, answer), budget)
    except TimeoutError:
        return _answer("timeout")


async def _admit(gate: Gate, pool: asyncpg.Pool, key: str, client: str | None) -> AuthUser:
    """The key's user, with the rate limits every `/v1` route applies (`app.auth.gate`)."""
    await gate.sweep_if_due(pool)
    return await gate.admit(pool, key, client)


async def _admitted(
    admit: Awaitable[AuthUser], settings: HookSettings, answer: Answer
) -> Response[dict[str, Any]]:
    """The caller's answer, or `{}` naming why not: an unknown key, a rate limit, a key without the
    `read` scope, the hooks switched off, or a database that cannot tell who is calling."""
    try:
        user = await admit
    except TooManyRequests:
        return _answer("rate-limited")
    except HTTPException:  # an unknown, revoked or expired key: `{}`, never a hook error on screen
        return _answer("unauthorized")
    except Exception as exc:  # the database cannot tell us who this is: the prompt goes on without memories
        return _failed("key lookup", exc)
    if missing_scope(user, READ) is not None:
        return _answer(f"missing-scope:{READ}")
    if not settings.enabled:
        return _answer("disabled")
    return await answer(user)


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
    hook_max_body_bytes: NamedDependency[int],
    namespace: FromQuery[str | None] = None,
) -> Response[dict[str, Any]]:
    ledger_pool: asyncpg.Pool = request.app.state.db.write
    metrics = _metrics(request)

    async def answer(user: AuthUser) -> Response[dict[str, Any]]:
        ledger = _ledger(ledger_pool, user, data.session_id, hook_settings)
        return await _answer_prompt(user, data, recall, hook_settings, namespace, ledger, metrics)

    return await _within_budget(request, hook_settings, hook_max_body_bytes, answer)


async def _answer_prompt(
    user: AuthUser,
    data: UserPromptSubmitEvent,
    recall: RecallService,
    settings: HookSettings,
    namespace: str | None,
    ledger: SessionLedger | None = None,
    metrics: HookMetrics | None = None,
) -> Response[dict[str, Any]]:
    """The answer to one UserPromptSubmit event from an allowed caller."""

    def left_alone(reason: str, outcome: str) -> Response[dict[str, Any]]:
        if metrics is not None:
            metrics.without_context(reason)
        return _answer(outcome)

    if data.hook_event_name not in (None, EVENT_NAME):
        return _answer("wrong-event")
    verdict = judge(data.prompt, settings.min_prompt_chars)
    if verdict.query is None:
        return left_alone("trivial", f"skipped:{verdict.reason}")
    scope = namespace or settings.default_namespace  # never derived from the event's paths
    if scope is None:
        return _answer("no-namespace")
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
        return _answer("no-namespace")
    except ApiError as exc:
        return _answer(f"rejected:{exc.status_code}")
    except Exception as exc:  # a broken recall must not fail the person's prompt
        return _failed("recall", exc)
    hits = pick(found.results, len(found.results), settings.min_score, settings.episode_min_score_ratio)
    if not hits:
        return left_alone("no-results", "no-results")
    # the answer clears the floor as a whole, then each episode must clear it on its own
    hits = floor.without_far_episodes(hits, found.results) if floor.clears(found.results) else []
    hits = without_bare_questions(hits)
    if not hits:
        return left_alone("floor", "below-floor")
    text, included, why_not = await _shown(ledger, scope, hits, settings)
    if not included:
        return left_alone(why_not, NO_CONTEXT_OUTCOMES[why_not])
    if metrics is not None:
        metrics.injected("prompt", len(text))
    return _context(EVENT_NAME, text, len(included))


NO_CONTEXT_OUTCOMES = {"seen": "all-seen", "budget": "budget-spent", "no-results": "no-results"}
"""The outcome header of a prompt left without context by the ledger, by metric reason."""


async def _shown(
    ledger: SessionLedger | None, scope: str, hits: list[RecallHit], settings: HookSettings
) -> tuple[str, list[RecallHit], str]:
    """(text, the hits it shows, why none when none): the first `max_results` hits the session has
    not been given, within the answer's and what is left of the session's character budget, now
    recorded as given. Without a ledger, or when it cannot be written, the first `max_results`
    hits within the answer's budget (the prompt still gets its memories, perhaps one it had)."""
    limit = settings.max_results
    if ledger is None:
        text, included = layout(scope, hits[:limit], settings.max_context_chars)
        return text, included, "no-results"
    by_id = {hit.id: hit for hit in hits}

    def arrange(unseen: list[int], remaining: int | None) -> tuple[str, list[int]]:
        room = settings.max_context_chars if remaining is None else min(settings.max_context_chars, remaining)
        text, shown = layout(scope, [by_id[public_id] for public_id in unseen[:limit]], room)
        return text, [hit.id for hit in shown]

    try:
        given = await ledger.give([hit.id for hit in hits], arrange)
    except Exception:  # cancellation (the budget) is no Exception: it still ends the request
        log.warning("hook ledger: recording the injected memories failed; served without it", exc_info=True)
        text, included = layout(scope, hits[:limit], settings.max_context_chars)
        return text, included, "no-results"
    why_not = "seen" if not given.unseen else "budget"
    return given.text, [by_id[public_id] for public_id in given.included], why_not


@post(
    "/session-start",
    status_code=HTTP_200_OK,
    tags=["hooks"],
    summary="Claude Code SessionStart hook: the namespace's pinned and most important memories, or {}",
)
async def session_start(
    request: Request[Any, Any, Any],
    data: JSONBody[SessionStartEvent],
    hook_settings: NamedDependency[HookSettings],
    hook_max_body_bytes: NamedDependency[int],
    namespace: FromQuery[str | None] = None,
) -> Response[dict[str, Any]]:
    pool: asyncpg.Pool = request.app.state.db.read
    ledger_pool: asyncpg.Pool = request.app.state.db.write
    metrics = _metrics(request)

    async def answer(user: AuthUser) -> Response[dict[str, Any]]:
        ledger = _ledger(ledger_pool, user, data.session_id, hook_settings)
        return await _answer_start(user, data, pool, hook_settings, namespace, ledger, metrics)

    return await _within_budget(request, hook_settings, hook_max_body_bytes, answer)


async def _answer_start(
    user: AuthUser,
    data: SessionStartEvent,
    pool: asyncpg.Pool,
    settings: HookSettings,
    namespace: str | None,
    ledger: SessionLedger | None = None,
    metrics: HookMetrics | None = None,
) -> Response[dict[str, Any]]:
    """The answer to one SessionStart event from an allowed caller."""
    if data.hook_event_name not in (None, SESSION_START):
        return _answer("wrong-event")
    scope = namespace or settings.default_namespace  # never derived from the event's paths
    if scope is None:
        return _answer("no-namespace")
    try:
        text, included = await session_start_context(
            pool,
            user.id,
            scope,
            data.source,
            data.session_id,
            settings.session_start_max_chars,
            ledger,
            startup_episodes=settings.start_episodes,
        )
    except NotFound:
        return _answer("no-namespace")
    except ApiError as exc:  # a namespace name the API refuses
        return _answer(f"rejected:{exc.status_code}")
    except Exception as exc:  # a broken query must not fail the session's start
        return _failed("session start", exc)
    if not included:
        return _answer("no-memories")
    if metrics is not None:
        metrics.injected("session-start", len(text))
    return _context(SESSION_START, text, included)


def _failed(step: str, exc: Exception) -> Response[dict[str, Any]]:
    """`{}` for a failed step: `timeout` or `unavailable` when the database is the cause, else `error`."""
    if isinstance(exc, TimeoutError):
        return _answer("timeout")
    if database_unavailable(exc) is not None:
        log.warning("hook %s: the database is unavailable: %r", step, exc)
        return _answer("unavailable")
    log.warning("hook %s failed", step, exc_info=exc)
    return _answer("error")


def hook_router(settings: HookSettings, max_body_bytes: int = 1024 * 1024) -> Router:
    """Mounted inside the `/v1` router for its `recall` dependency; its API-key middleware skips these
    routes, which look the key up within their budget. At the request deadline (a safety net: the
    budget is far shorter) the answer is `{}` too, never a 503 a person would see as a hook error.

    `max_body_bytes` is the server's normal body limit (`MEMORIA_SERVER__MAX_BODY_BYTES`): these
    routes read bodies up to `MAX_HOOK_BODY_BYTES` (or that limit, if larger) and answer `{}` to any
    over the normal one."""

    def provide_settings() -> HookSettings:
        return settings

    def provide_max_body_bytes() -> int:
        return max_body_bytes

    return Router(
        path="/hooks/claude-code",
        route_handlers=[user_prompt_submit, session_start],
        dependencies={
            "hook_settings": Provide(provide_settings, sync_to_thread=False),
            "hook_max_body_bytes": Provide(provide_max_body_bytes, sync_to_thread=False),
        },
        request_max_body_size=max(MAX_HOOK_BODY_BYTES, max_body_bytes),
        # With the `/v1` router's scheme this reads "the API key, or nothing": the key is what
        # finds memories, and without one the answer is `{}` with 200, never a 401.
        security=[{}],
        opt={"exclude_from_auth": True, DEADLINE_ANSWER: lambda: _answer("deadline")},
    )
