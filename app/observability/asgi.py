"""The outermost layer of every HTTP request, before routing (so 404s pass through it too).

It takes the caller's `X-Request-ID` (or makes one), echoes it on the response, makes it current
for the request's log lines, and times the request into the route's histogram once the response's
last byte is sent. A query string holding a credential (`GET /recall?q=…ghp_…` from the web UI) is
written to the access line with the credential replaced by its placeholder, as a stored memory would
hold it.
"""

from __future__ import annotations

import time
from urllib.parse import quote, unquote_plus

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from app.core.logs import (
    REQUEST_ID_HEADER,
    accept_request_id,
    bind_access_path,
    bind_request_id,
    unbind_access_path,
    unbind_request_id,
)
from app.core.metrics import UNMATCHED_ROUTE, HttpMetrics
from app.secrets import redact

# What stays as it is when a redacted query is written back percent-encoded: its structure and the
# placeholders' own characters.
_QUERY_SAFE = "=&[]:#/,@"

_HEADER = REQUEST_ID_HEADER.encode()


def _incoming_request_id(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == _HEADER:
            return value.decode("latin-1")
    return None


def redacted_path(scope: Scope) -> str | None:
    """The request's path and query as its access line may show them, credentials replaced by their
    placeholders; None when the query holds none (the line then shows it as sent)."""
    query = scope.get("query_string", b"")
    if not query:
        return None
    redacted = redact(unquote_plus(query.decode("latin-1")))
    if not redacted.findings:
        return None
    return f"{quote(scope['path'])}?{quote(redacted.text, safe=_QUERY_SAFE)}"


class RequestObserver:
    def __init__(self, app: ASGIApp, http: HttpMetrics) -> None:
        self._app = app
        self._http = http

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self._app(scope, receive, send)
            return
        started = time.perf_counter()
        request_id = accept_request_id(_incoming_request_id(scope))
        echoed = (_HEADER, request_id.encode())
        status = 500  # what the server answers when the app raised before starting a response

        async def send_with_request_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), echoed]
            await send(message)

        token = bind_request_id(request_id)
        logged_path = redacted_path(scope)
        path_token = bind_access_path(logged_path) if logged_path is not None else None
        try:
            await self._app(scope, receive, send_with_request_id)
        finally:
            route = scope.get("path_template") or UNMATCHED_ROUTE  # set by the router on a match
            self._http.observe(route, scope["method"], status, time.perf_counter() - started)
            if path_token is not None:
                unbind_access_path(path_token)
            unbind_request_id(token)
