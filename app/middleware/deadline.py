"""Every request is answered within its deadline (`MEMORIA_SERVER__REQUEST_DEADLINE_MS`).

The deadline starts when the request reaches the app and covers everything after: authentication
(a key lookup), the handler, the database. The middleware puts it in force for the request
(`app.core.deadline.current()`), so pool acquires wait no longer than it, and runs the request in a
task of its own. When the deadline passes before the answer has started, the task is cancelled and
left to unwind in the background, and the client gets 503 with `Retry-After` at once: unwinding a
database call on a hung server (a ROLLBACK, the cancel handshake of a running statement) waits on
that same server, so waiting for it is what made requests outlive their deadline. A route may answer
differently at the deadline (the Claude Code hook answers `{}`): its handler's `opt[DEADLINE_ANSWER]`
is a callable returning that answer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from litestar import Request, Response
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from app.core import deadline
from app.core.deadline import DEADLINE_KIND, WRITE
from app.errors import unavailable

log = logging.getLogger(__name__)

DEADLINE_ANSWER = "deadline_answer"  # route opt: Callable[[], Response[Any]] answered at the deadline


class RequestDeadlineMiddleware:
    """ASGI middleware (app level, so it wraps the API-key middleware as well as the handler)."""

    def __init__(self, app: ASGIApp, deadline_ms: int, write_deadline_ms: int) -> None:
        self.app = app
        self.default_s = deadline_ms / 1000
        self.write_s = write_deadline_ms / 1000

    def _deadline_s(self, scope: Scope) -> float:
        handler = scope.get("route_handler")
        return (
            self.write_s
            if handler is not None and handler.opt.get(DEADLINE_KIND) == WRITE
            else self.default_s
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        deadline_s = self._deadline_s(scope)
        limit = deadline.Deadline.after(deadline_s)
        started = False
        closed = False  # the deadline answered: whatever the request still sends is dropped

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if closed:
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        async def handle() -> None:
            await self.app(scope, receive, guarded_send)

        with deadline.bounded_by(limit):  # the task copies the context, and the deadline with it
            task: asyncio.Task[None] = asyncio.get_running_loop().create_task(handle())
        try:
            done, _ = await asyncio.wait({task}, timeout=limit.remaining())
        except BaseException:  # the server is cancelling this request (shutdown, client gone)
            deadline.detach(task)
            raise
        if task in done:
            task.result()  # the request's own outcome, an escaped exception included
            return
        if started:  # the answer is already on its way; a deadline cannot take it back
            await task
            return
        closed = True
        deadline.detach(task)
        log.warning(
            "%s %s: no answer within the %.0f ms request deadline; answering for it",
            scope.get("method", ""),
            scope.get("path", ""),
            deadline_s * 1000,
        )
        answer = _deadline_answer(scope, deadline_s)
        await answer.to_asgi_response(app=None, request=Request(scope, receive))(scope, receive, send)


def _deadline_answer(scope: Scope, deadline_s: float) -> Response[Any]:
    handler = scope.get("route_handler")
    custom: Callable[[], Response[Any]] | None = handler.opt.get(DEADLINE_ANSWER) if handler else None
    if custom is not None:
        return custom()
    return unavailable(
        f"no answer within the request deadline of {deadline_s * 1000:.0f} ms "
        "(the database is unavailable, hung or overloaded)"
    )
