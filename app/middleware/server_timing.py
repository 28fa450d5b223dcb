"""The `Server-Timing` header: the phases of a request (authentication, scope, embedding, SQL …)
as the code on its path recorded them (`app.core.timing`), so a client or a benchmark sees where
the milliseconds went. Off by default (`MEMORIA_SERVER__SERVER_TIMING`): the split says a little more
about the server's work than the total time a client measures anyway.

Two parts: the middleware opens the request's `RequestTimings` and leaves it in the ASGI scope; the
`before_send` hook writes it into the answer. An answer to an exception (a 401 from the key
middleware) is sent by Litestar's outermost exception handler, outside every middleware, so only a
`before_send` hook sees every answer.
"""

from __future__ import annotations

from litestar.datastructures import MutableScopeHeaders
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from app.core import timing

_SCOPE_KEY = "memoria.timings"


class ServerTimingMiddleware:
    """ASGI middleware, outermost, so `app` covers every other middleware as well as the handler."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        with timing.collecting() as timings:
            scope[_SCOPE_KEY] = timings  # type: ignore[literal-required]  # read back by the hook below
            await self.app(scope, receive, send)


async def server_timing_header(message: Message, scope: Scope) -> None:
    """`before_send` hook: the request's phases on the start of its answer."""
    timings = scope.get(_SCOPE_KEY)
    if message["type"] == "http.response.start" and isinstance(timings, timing.RequestTimings):
        message.setdefault("headers", [])
        MutableScopeHeaders.from_message(message)["Server-Timing"] = timings.header()
