"""`/mcp`: the streamable-HTTP MCP endpoint, mounted in the API beside the REST routes.

Built on the official SDK's low-level `Server` (tool definitions and calls are ours, `app.mcp.tools`
and `app.mcp.calls`) and its `StreamableHTTPSessionManager` in stateless, JSON-response mode: each
POST carries one JSON-RPC message and gets one JSON answer, no session lives in this process, so any
replica can answer any request and nothing ties a client to a connection (or to a PostgreSQL
session: fine behind PgBouncer in transaction mode). The manager's task group runs for the app's
lifetime (`McpEndpoint.lifespan`, one of the app's lifespans).

Authentication is the REST API's: the same Bearer keys, looked up with the same rate limits
(`app.auth.gate`) before the SDK sees the request, so no key or a bad key is a 401 problem body and
nothing of MCP runs. A key over its rate limit still reaches MCP (initialize and tools/list work) and
every tool call it makes answers "rate limited" as a tool error; an address locked out for failed
authentications gets 429, since its key was never looked up. Scopes are checked per tool
(`app.mcp.calls`). The SDK checks Host and Origin (DNS rebinding) against `McpSettings`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast
from urllib.parse import parse_qs

import mcp_types as types
from litestar import Litestar, asgi
from litestar.connection import ASGIConnection
from litestar.handlers import ASGIRouteHandler
from litestar.types import Receive, Scope, Send
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from app.auth.gate import Gate
from app.auth.middleware import bearer_key, client_host
from app.auth.service import AuthUser
from app.core import deadline
from app.core.deadline import DEADLINE_KIND, WRITE
from app.db.replica import act_for
from app.errors import TooManyRequests
from app.mcp import tools
from app.mcp.bodies import CheckedBodies
from app.mcp.calls import Caller, call_tool
from app.mcp.settings import McpSettings
from app.mcp.streams import EventStreams

PATH = "/mcp"
NAMESPACE_HEADER = "x-memoria-namespace"
CALLER_KEY = "memoria.mcp.caller"
"""Where the authenticated `Caller` rides in the ASGI scope, from the mount to the tool handler."""

INSTRUCTIONS = (
    "Memoria is your long-term memory across sessions: memory_recall searches what was decided, "
    "preferred or fixed before; memory_store remembers decisions, preferences, conventions, runbook "
    "steps and fixes as you learn them. A prompt hook may already add the memories relevant to each "
    "prompt: recall when you need more (the user refers to earlier work or asks what we decided). "
    "If these tools are deferred, load them with a tool search for memory, remember or recall."
)
"""Sent once at connection; Claude Code puts it in the system prompt even while the tools are
deferred behind its tool search, so it names the tools and the words that find them."""

SEARCH_HINT = "anthropic/searchHint"
"""The tool `_meta` key Claude Code's tool search matches besides a deferred tool's name and description."""

_KEY_LIMITED = "this API key"
"""How `Gate.admit` words a key's own rate limit (as opposed to an address's lockout)."""


def _tool_definitions() -> list[types.Tool]:
    return [
        types.Tool(
            name=spec.name,
            description=spec.description,
            input_schema=spec.input_schema,
            _meta={SEARCH_HINT: spec.search_hint} if spec.search_hint else None,
            annotations=types.ToolAnnotations(
                read_only_hint=spec.read_only,
                destructive_hint=spec.name == "memory_forget" if not spec.read_only else None,
            ),
        )
        for spec in tools.TOOLS
    ]


def _input_schema(name: str) -> dict[str, Any] | None:
    spec = tools.BY_NAME.get(name)
    return spec.input_schema if spec is not None else None


def _caller(ctx: ServerRequestContext[Any, Any]) -> Caller:
    request = ctx.request
    caller = request.scope.get(CALLER_KEY) if request is not None else None
    if not isinstance(caller, Caller):  # only reachable through the mount, which always sets it
        raise RuntimeError("MCP request without an authenticated caller")
    # in the tool handler's own task: its reads see the user's writes on a replica (app.db.replica)
    act_for(caller.user.id, note_writes=True)
    return caller


async def _list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=_tool_definitions())


async def _call_tool(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    outcome = await call_tool(_caller(ctx), params.name, params.arguments)
    return types.CallToolResult(content=[types.TextContent(text=outcome.text)], is_error=outcome.is_error)


class McpEndpoint:
    """The `/mcp` route and the lifespan that runs its session manager (one per app)."""

    def __init__(self, settings: McpSettings, read_deadline_ms: int, max_body_bytes: int) -> None:
        self._settings = settings
        self._read_deadline_s = read_deadline_ms / 1000
        self.streams = EventStreams(settings.streams_per_key, settings.stream_max_lifetime_s)
        server: Server[Any] = Server(
            "memoria",
            version="0.1.0",
            instructions=INSTRUCTIONS,
            # the schema of a called tool straight from the table: without it the SDK runs tools/list
            # once per 2026-era tools/call to check `Mcp-Param-*` headers (work on every call)
            get_tool_input_schema=_input_schema,
            on_list_tools=_list_tools,
            on_call_tool=_call_tool,
        )
        self._manager = StreamableHTTPSessionManager(
            server,
            json_response=True,
            stateless=True,
            security_settings=TransportSecuritySettings(
                enable_dns_rebinding_protection=True,
                allowed_hosts=list(settings.allowed_hosts),
                allowed_origins=list(settings.allowed_origins),
            ),
            max_request_body_size=max_body_bytes,
        )
        # too large or a key twice: a JSON-RPC error before the SDK reads it (app/mcp/bodies.py)
        self._checked = CheckedBodies(cast(Any, self._manager.handle_request), max_body_bytes)
        self.route: ASGIRouteHandler = asgi(
            PATH,
            copy_scope=True,
            opt={DEADLINE_KIND: WRITE},  # a store embeds what it writes; reads are bounded in calls.py
            include_in_schema=False,
        )(self._handle)

    @asynccontextmanager
    async def lifespan(self, app: Litestar) -> AsyncIterator[None]:
        # the transport logs every stateless request's end at INFO: noise beside the access log
        logging.getLogger("mcp.server.streamable_http").setLevel(logging.WARNING)
        async with self._manager.run():
            yield

    async def _handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Authenticate, then hand the request to the SDK with the caller in its scope. A 401 or an
        address lockout is raised here, before the SDK reads anything, and answered as problem+json
        by the app's exception handlers."""
        app = scope["app"]
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        key = bearer_key(headers.get("authorization", ""))
        gate: Gate = app.state.gate
        pool = app.state.db.write
        connection: ASGIConnection[Any, Any, Any, Any] = ASGIConnection(scope, receive)
        limited: TooManyRequests | None = None
        try:
            # the key lookup waits no longer than a REST read would (the route's deadline is a write's)
            with deadline.bounded_by(deadline.Deadline.after(self._read_deadline_s)):
                await gate.sweep_if_due(pool)
                user = await gate.admit(pool, key, client_host(connection))
        except TooManyRequests as exc:
            if not str(exc.detail).startswith(_KEY_LIMITED):
                raise  # an address locked out for failed authentications: its key was never checked
            limited, user = exc, None
        caller = Caller(
            user=user if user is not None else _LIMITED_USER,
            namespace=_namespace(scope, headers),
            memories=app.state.memory_service,
            recall=app.state.recall_service,
            links=app.state.link_service,
            settings=self._settings,
            read_deadline_s=self._read_deadline_s,
            rate_limited=limited,
        )
        cast(dict[str, Any], scope)[CALLER_KEY] = caller
        if scope.get("method") != "GET":
            await self._checked(scope, receive, send)  # bodies bounded and checked (app.mcp.bodies)
            return
        if limited is not None:
            raise limited  # a key over its rate limit opens no stream
        # an event stream: bounded in number per key and in lifetime (app.mcp.streams)
        await self.streams.hold(
            caller.user.key_id,
            lambda tracked: self._manager.handle_request(
                cast(Any, scope), cast(Any, receive), cast(Any, tracked)
            ),
            send,
        )


def _namespace(scope: Scope, headers: dict[str, str]) -> str | None:
    """The namespace the connection was installed for: the header, else `?namespace=`."""
    named = headers.get(NAMESPACE_HEADER, "").strip()
    if named:
        return named
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    values = [v.strip() for v in query.get("namespace", []) if v.strip()]
    return values[0] if values else None


_LIMITED_USER = AuthUser(id=0, name="", key_id=0, scopes=frozenset())
"""Stands in for a key whose rate limit refused the request: its calls answer "rate limited" first."""
