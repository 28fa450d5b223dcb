"""One tool call: check the key's scope, decode the arguments, call the domain service, render text.

Every outcome is a tool result, never a transport failure: a bad argument, an unknown id, a missing
scope, a rate limit or an unavailable database comes back as `isError` text the agent can read and
act on (the MCP spec's rule for errors a model can correct). A bug is logged here with its traceback
and answered with one line; no stack trace leaves the server.

The namespace is the call's `namespace` argument, else the one the connection was installed for
(`X-Memoria-Namespace` / `?namespace=`), else the services' own default (store: `default`; recall
and list: all of the caller's own namespaces). Either way the services resolve it among the
caller's namespaces (or those shared with them, named `@owner/name`), so no argument reaches
another user's memories.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from app.auth.service import AuthUser
from app.core import deadline
from app.errors import ApiError, NotFound, TooManyRequests, database_unavailable
from app.links import LinkService
from app.mcp import render, tools
from app.mcp.settings import McpSettings
from app.memories import MemoryService
from app.memories.schemas import MemoryIn, MemoryPatch
from app.memories.service import ListFilters
from app.recall import RecallService
from app.recall.schemas import RecallFilters, RecallRequest

log = logging.getLogger(__name__)

IMPORTANT_WINDOW = 200
"""`memory_list order=important` ranks this many of the newest memories by importance."""


class ToolError(Exception):
    """A call the agent can correct or retry: its message is the tool result."""


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is calling, for which namespace, through which services (one per HTTP request)."""

    user: AuthUser
    namespace: str | None
    memories: MemoryService
    recall: RecallService
    links: LinkService
    settings: McpSettings
    read_deadline_s: float
    rate_limited: TooManyRequests | None = None
    """The key's rate limit refused this request: every tool call answers that instead."""


@dataclass(frozen=True, slots=True)
class Outcome:
    text: str
    is_error: bool = False


async def call_tool(caller: Caller, name: str, arguments: dict[str, Any] | None) -> Outcome:
    """The result of tool `name` with `arguments` for `caller`; never raises."""
    spec = tools.BY_NAME.get(name)
    if spec is None:
        return Outcome(f"unknown tool {name!r}; the tools are {', '.join(tools.BY_NAME)}", is_error=True)
    try:
        if caller.rate_limited is not None:
            limited = caller.rate_limited
            raise ToolError(f"rate limited: {limited.detail}; retry in {limited.retry_after} s")
        if spec.scope not in caller.user.scopes:
            raise ToolError(
                f"this API key lacks the `{spec.scope}` scope {name} needs "
                f"(create one with `memoria keys create --scope {spec.scope}`)"
            )
        try:
            args = msgspec.convert(tools.with_ids_read(arguments or {}), spec.args, strict=True)
        except msgspec.ValidationError as exc:
            raise ToolError(f"invalid arguments for {name}: {exc}") from None
        run = _RUNNERS[name]
        if spec.read_only:  # reads answer within the REST read deadline; writes embed, and get the longer one
            with deadline.bounded_by(deadline.Deadline.after(caller.read_deadline_s)):
                return Outcome(await run(caller, args))
        return Outcome(await run(caller, args))
    except ToolError as exc:
        return Outcome(str(exc), is_error=True)
    except ApiError as exc:
        return Outcome(_api_error(exc), is_error=True)
    except Exception as exc:
        reason = database_unavailable(exc)
        if reason is not None:
            log.warning("MCP %s: %s: %r", name, reason, exc)
            return Outcome(f"temporarily unavailable: {reason}; try again shortly", is_error=True)
        log.exception("MCP tool %s failed", name)
        return Outcome(f"{name} failed on the server (logged there); try again later", is_error=True)


_KIND = {403: "not allowed", 404: "not found", 409: "conflict", 422: "invalid arguments", 429: "rate limited"}


def _api_error(exc: ApiError) -> str:
    kind = _KIND.get(exc.status_code, "refused")
    text = f"{kind}: {exc.detail}"
    if isinstance(exc, TooManyRequests):
        text += f"; retry in {exc.retry_after} s"
    if isinstance(exc.extra, dict) and "existing_id" in exc.extra:
        text += f" (memory_get {exc.extra['existing_id']})"
    return text


def _nothing_in(namespace: str | None) -> str:
    return f"No memories in namespace {namespace} yet (none of yours, or shared with you, by that name)."


def _namespace(caller: Caller, given: str | None) -> str | None:
    """The namespace a call names, else the connection's; a name given is checked as REST checks it
    (`""` is a 422 there and a tool error here, never the default namespace)."""
    return given if given is not None else caller.namespace


async def _store(caller: Caller, args: tools.StoreToolArgs) -> str:
    named = _namespace(caller, args.namespace)
    namespace = named if named is not None else "default"
    items = [
        MemoryIn(
            content=m.content,
            namespace=namespace,
            category=m.category,
            tags=m.tags,
            importance=m.importance,
            expanded_keywords=m.expanded_keywords,
            source="mcp",
            supersedes=m.supersedes,
        )
        for m in args.memories
    ]
    return render.stored_text(await caller.memories.store(caller.user.id, items))


async def _recall(caller: Caller, args: tools.RecallToolArgs) -> str:
    namespace = _namespace(caller, args.namespace)
    try:
        request = RecallRequest(
            query=args.query,
            namespace=namespace,
            limit=args.limit,
            expanded_query=args.expanded_query,
            filters=RecallFilters(
                category=args.category,
                tags=args.tags,
                kinds=args.kinds,
                include_superseded=args.include_superseded,
                as_of=args.as_of,
            ),
            sort=args.sort,
            explain=args.explain,
            rerank=args.rerank,
        )
        request = msgspec.convert(msgspec.to_builtins(request), RecallRequest)  # the REST body's limits
    except (msgspec.ValidationError, ValueError) as exc:  # ValueError: a struct's own check (kinds twice)
        raise ToolError(f"invalid arguments for memory_recall: {exc}") from None
    try:
        found = await caller.recall.recall(caller.user.id, request)
    except NotFound:  # nothing stored there yet (or not yours): for the agent, simply nothing
        return _nothing_in(namespace)
    limits = caller.settings
    return render.recall_text(
        found.results, found.degraded, limits.max_memory_chars, limits.max_result_chars, found.settings
    )


async def _get(caller: Caller, args: tools.GetToolArgs) -> str:
    memory = await caller.memories.get(caller.user.id, args.id)
    # from the pool `get` read, so a memory stored a moment ago is there (a replica may lag)
    links = await caller.links.of(caller.user.id, args.id, caller.links.db.write)
    return render.memory_text(memory, caller.settings.max_result_chars, links)


async def _link(caller: Caller, args: tools.LinkToolArgs) -> str:
    if args.undo:
        await caller.links.remove(caller.user.id, args.id, args.kind, args.target)
        links = await caller.links.of(caller.user.id, args.id, caller.links.db.write)
        done = f"Removed #{args.id} {args.kind} #{args.target}."
    else:
        links = await caller.links.add(caller.user.id, args.id, args.kind, args.target)
        done = f"Linked #{args.id} {args.kind} #{args.target}."
    return done + "\n" + render.links_text(links, caller.settings.max_result_chars)


async def _update(caller: Caller, args: tools.UpdateToolArgs) -> str:
    fields = {
        name: getattr(args, name)
        for name in ("content", "category", "tags", "importance", "expanded_keywords")
        if getattr(args, name) is not msgspec.UNSET
    }
    if not fields:
        raise ToolError("memory_update needs at least one field to change besides id")
    try:
        patch = msgspec.convert(fields, MemoryPatch)  # the REST body's limits (category length …)
    except msgspec.ValidationError as exc:
        raise ToolError(f"invalid arguments for memory_update: {exc}") from None
    memory = await caller.memories.update(caller.user.id, args.id, patch)
    return "Updated.\n" + render.memory_text(memory, caller.settings.max_result_chars)


async def _promote(caller: Caller, args: tools.PromoteToolArgs) -> str:
    memory = await caller.memories.promote(
        caller.user.id, args.id, importance=args.importance, pinned=args.pinned
    )
    return "Promoted.\n" + render.memory_text(memory, caller.settings.max_result_chars)


async def _forget(caller: Caller, args: tools.ForgetToolArgs) -> str:
    await caller.memories.delete(caller.user.id, args.id)
    return f"Forgot #{args.id}."


async def _list(caller: Caller, args: tools.ListToolArgs) -> str:
    namespace = _namespace(caller, args.namespace)
    filters = ListFilters(namespaces=[namespace] if namespace is not None else None, category=args.category)
    try:
        page = await caller.memories.list(
            caller.user.id, filters, args.limit if args.order == "recent" else IMPORTANT_WINDOW
        )
    except NotFound:
        return _nothing_in(namespace)
    items = page.items
    if args.order == "important":
        items = sorted(items, key=lambda m: (-m.importance, -m.created_at.timestamp()))[: args.limit]
    limits = caller.settings
    return render.list_text(items, args.order, limits.max_memory_chars, limits.max_result_chars)


_RUNNERS: dict[str, Callable[[Caller, Any], Awaitable[str]]] = {
    "memory_store": _store,
    "memory_recall": _recall,
    "memory_get": _get,
    "memory_link": _link,
    "memory_update": _update,
    "memory_forget": _forget,
    "memory_promote": _promote,
    "memory_list": _list,
}
