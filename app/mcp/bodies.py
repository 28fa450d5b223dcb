"""The request bodies `/mcp` refuses before the SDK reads them, each answered as a JSON-RPC error.

A body over `max_body_bytes`: the SDK's own limit answered a plain-text 413, which the official client
could only report as a failed transport; a JSON-RPC error (`Invalid Request`, its id null since the
request was never read) is what a client reports as the failed call it is. A body with a key twice in
one object: the SDK's decoder kept the last one silently (`{"name": "memory_list", "name":
"memory_store"}` ran a store), so it is refused as every JSON body the service reads is
(`app.core.validation.duplicate_key`, the REST API's rule too).
"""

from __future__ import annotations

import json
from collections import deque

from litestar.enums import ScopeType
from litestar.types import (
    ASGIApp,
    HTTPResponseBodyEvent,
    HTTPResponseStartEvent,
    Receive,
    ReceiveMessage,
    Scope,
    Send,
)

from app.core.validation import duplicate_key

INVALID_REQUEST = -32600
"""JSON-RPC's code for a message that is not a valid request."""


async def _answer(send: Send, status: int, message: str) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": message}})
    start: HTTPResponseStartEvent = {
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
    }
    await send(start)
    content: HTTPResponseBodyEvent = {"type": "http.response.body", "body": body.encode(), "more_body": False}
    await send(content)


def _declared_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class CheckedBodies:
    """Reads a POST's body (at most `max_body_bytes`), refuses it as above, and hands the request on
    with the body replayed."""

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self._app = app
        self._max = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP or scope["method"] != "POST":
            await self._app(scope, receive, send)
            return
        too_large = f"request body too large: at most {self._max} bytes"
        declared = _declared_length(scope)
        if declared is not None and declared > self._max:
            await _answer(send, 413, too_large)
            return
        body = bytearray()
        pending: deque[ReceiveMessage] = deque()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                pending.append(message)  # the client left: the SDK sees it too
                break
            body += message.get("body", b"")
            if len(body) > self._max:
                await _answer(send, 413, too_large)
                return
            if not message.get("more_body", False):
                break
        if body:
            try:
                twice = duplicate_key(bytes(body))
            except (ValueError, RecursionError):
                twice = None  # not JSON the SDK can read either: its own parse error answers it
            if twice is not None:
                await _answer(send, 400, f"the key {twice[:80]!r} appears twice in one object")
                return
        pending.appendleft({"type": "http.request", "body": bytes(body), "more_body": False})

        async def replay() -> ReceiveMessage:
            return pending.popleft() if pending else await receive()

        await self._app(scope, replay, send)
