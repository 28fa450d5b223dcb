"""`POST /v1/capture/<agent>`: the capture hooks send a coding agent's new exchanges, one route per
agent (`/v1/capture/claude-code`, `/v1/capture/codex`, ...: the hosts of `app.hooks.hosts`, which
the wiring names); the episodes record the agent as their `source`."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request, post
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from litestar.params import JSONBody, QueryParameter
from litestar.status_codes import HTTP_200_OK

from app.auth import AuthUser
from app.capture.schemas import CaptureRequest, CaptureResult
from app.capture.service import CaptureService
from app.core.deadline import DEADLINE_KIND, WRITE
from app.errors import problem

DEFAULT_NAMESPACE = "default"
"""Where a capture goes without `namespace`: where `POST /v1/memories` stores without one."""
CAPTURE_SOURCE = "capture_source"
"""The route's `opt` key naming the agent its exchanges come from."""


async def capture_exchanges(
    request: Request[AuthUser, int, Any],
    data: JSONBody[CaptureRequest],
    capture: NamedDependency[CaptureService],
    namespace: Annotated[
        str | None,
        QueryParameter(
            min_length=1,
            max_length=300,
            description="Own namespace (created on first use) or `@owner/name` shared for writing; "
            "default `default`",
        ),
    ] = None,
) -> CaptureResult:
    source: str = request.route_handler.opt[CAPTURE_SOURCE]
    return await capture.capture(request.user.id, namespace or DEFAULT_NAMESPACE, data, source)


def capture_route(source: str, label: str) -> HTTPRouteHandler:
    """`POST /capture/<source>`: `label`'s exchanges stored as episodes whose source is `source`."""
    return post(
        f"/capture/{source}",
        status_code=HTTP_200_OK,
        tags=["capture"],
        summary=f"Store a {label} session's exchanges as episodes (idempotent per session and turn)",
        description=(
            "Each exchange (a prompt and the assistant's final reply, with a digest of its tool calls) "
            "is stored as one or more `episode` memories: `<private>…</private>` spans removed, "
            "credentials redacted, chunked under `MEMORIA_CAPTURE__MAX_CHUNK_CHARS`, embedded by a "
            f"background job. The key `{source}:<session_id>:<turn>:<chunk>` is unique per namespace: "
            "an exchange sent again is a `duplicate`, never stored twice. Episodes expire after "
            "`MEMORIA_MEMORIES__EPISODE_TTL_DAYS` unless recalled or promoted. Exchanges with nothing "
            "to remember (greetings, API errors, interruptions, refused tool calls, progress-only replies, "
            "unanswered questions, empty ones) are `skipped`, counted per reason in `skipped_reasons`; "
            "with capture disabled (`MEMORIA_CAPTURE__ENABLED=false`) every exchange is. An exchange "
            "repeating an episode of the namespace (the same prompt and reply, case and punctuation "
            "aside) is `folded` into it: its `seen_count` grows and its expiry moves back, no new row."
        ),
        opt={DEADLINE_KIND: WRITE, CAPTURE_SOURCE: source},
        responses={
            403: problem("`namespace` is shared with you read-only, or the key lacks the `write` scope"),
            404: problem("`namespace` is an `@owner/name` address not shared with you"),
            409: problem("`namespace` is new and would pass your namespace cap (`max_namespaces`)"),
        },
    )(capture_exchanges)
