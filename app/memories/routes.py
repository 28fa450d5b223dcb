"""HTTP routes of the memory API: thin handlers over `MemoryService`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from litestar import Controller, Request, Response, delete, get, patch, post
from litestar.di import NamedDependency
from litestar.openapi import ResponseSpec
from litestar.params import FromQuery, JSONBody, PathParameter, QueryParameter
from litestar.status_codes import HTTP_200_OK, HTTP_201_CREATED, HTTP_204_NO_CONTENT

from app.auth import AuthUser
from app.auth.scopes import SCOPE_OPT, SECRETS_READ
from app.core.deadline import DEADLINE_KIND, WRITE
from app.errors import InvalidInput, problem
from app.memories.schemas import (
    CATEGORY,
    Cursor,
    Memory,
    MemoryIn,
    MemoryKind,
    MemoryPage,
    MemoryPatch,
    MemorySecrets,
    PromoteIn,
    StoreBatchResult,
    StoreResult,
    Text,
    Timestamp,
)
from app.memories.service import ListFilters, MemoryService
from app.memories.validation import SOURCE_MAX_CHARS

AuthRequest = Request[AuthUser, int, Any]
MemoryId = Annotated[int, PathParameter(ge=1, le=2**63 - 1, description="Memory id")]
Service = NamedDependency[MemoryService]
NOT_YOURS = problem("No memory with this id among yours (or it is deleted)")
READ_ONLY = problem("This memory is shared with you read-only, or the key lacks the `write` scope")


class MemoryController(Controller):
    path = "/memories"
    tags = ["memories"]

    @post(
        "/",
        status_code=HTTP_201_CREATED,
        summary="Store one memory (JSON object) or a batch (JSON array, at most 100)",
        opt={DEADLINE_KIND: WRITE},
        responses={
            HTTP_200_OK: ResponseSpec(
                StoreResult,
                description="One memory whose content the namespace already holds: its id, `duplicate: true`",
                generate_examples=False,
            ),
            404: problem(
                "A memory that `supersedes` names is not among yours (or is deleted): nothing of the "
                "batch is stored"
            ),
            409: problem(
                "The batch would create namespaces past your cap (`max_namespaces`): nothing of it is stored"
            ),
        },
    )
    async def store(
        self,
        request: AuthRequest,
        data: JSONBody[MemoryIn | list[MemoryIn]],
        memories: Service,
    ) -> Response[StoreResult | StoreBatchResult]:
        # Concept indexing (and embedding, if the provider failed) are durable jobs committed with
        # the memories; the worker pool runs them after the answer is sent.
        batch = isinstance(data, list)
        results = await memories.store(request.user.id, data if isinstance(data, list) else [data])
        if batch:
            return Response(StoreBatchResult(results=results), status_code=HTTP_201_CREATED)
        (result,) = results
        status = HTTP_200_OK if result.duplicate else HTTP_201_CREATED
        return Response(result, status_code=status)

    @get("/{memory_id:int}", summary="Read one memory", responses={404: NOT_YOURS})
    async def read(
        self,
        request: AuthRequest,
        memory_id: MemoryId,
        memories: Service,
        include_deleted: FromQuery[bool] = False,
    ) -> Memory:
        return await memories.get(request.user.id, memory_id, include_deleted)

    @get(
        "/{memory_id:int}/secrets",
        summary="The originals of a memory's credential placeholders (owner only, `secrets:read`)",
        description=(
            "Opens the originals sealed when the memory was stored or changed. Only the memory's "
            "owner: a namespace shared with you is not yours (404). Needs a key with the "
            "`secrets:read` scope (403 without it); every read is recorded in `secret_reads`. "
            "Placeholders whose original is kept nowhere (the server had no encryption key, which "
            "keeps nothing) are listed in `not_kept`, with `originals_kept: false` and a `detail` "
            "saying why: still a 200. 409 when a sealed original cannot be opened (its key is no "
            "longer configured, or it does not authenticate)."
        ),
        opt={SCOPE_OPT: SECRETS_READ},
        responses={
            403: problem("The key lacks the `secrets:read` scope"),
            404: NOT_YOURS,
            409: problem("A sealed original cannot be opened: unknown key id, or it does not authenticate"),
        },
    )
    async def read_secrets(
        self, request: AuthRequest, memory_id: MemoryId, memories: Service
    ) -> Response[MemorySecrets]:
        client = request.client.host if request.client is not None else None
        result = await memories.read_secrets(request.user.id, memory_id, request.user.key_id, client)
        return Response(result, headers={"Cache-Control": "no-store"})

    @get(
        "/",
        summary="List memories, newest first, with cursor pagination",
        responses={404: problem("A `namespace` you do not have")},
    )
    async def list_memories(
        self,
        request: AuthRequest,
        memories: Service,
        namespace: FromQuery[list[str] | None] = None,
        category: Annotated[str | None, QueryParameter(**CATEGORY)] = None,
        source: Annotated[
            str | None,
            QueryParameter(
                min_length=1,
                max_length=SOURCE_MAX_CHARS,
                description="Only memories from this source: the agent an exchange was captured from "
                "(`claude-code`, `codex`, `gemini`), or what a store named.",
            ),
        ] = None,
        tags: FromQuery[list[Text] | None] = None,
        tags_match: FromQuery[Literal["any", "all"]] = "any",
        created_since: FromQuery[Timestamp | None] = None,
        created_until: FromQuery[Timestamp | None] = None,
        include_deleted: FromQuery[bool] = False,
        include_sensitive: FromQuery[bool] = False,
        kind: FromQuery[MemoryKind | None] = None,
        pinned: FromQuery[bool | None] = None,
        include_superseded: FromQuery[bool] = False,
        as_of: FromQuery[Timestamp | None] = None,
        limit: Annotated[int, QueryParameter(ge=1, le=200)] = 50,
        cursor: FromQuery[Cursor | None] = None,
    ) -> MemoryPage:
        # the query parser reads `kind=null` or `pinned=null` as "not given": a filter that was
        # asked for but has no valid value must not silently list everything
        if kind is None and "kind" in request.query_params:
            raise InvalidInput("kind must be memory or episode")
        if pinned is None and "pinned" in request.query_params:
            raise InvalidInput("pinned must be true or false")
        filters = ListFilters(
            namespaces=namespace,
            category=category,
            source=source,
            tags=tags,
            tags_match_all=tags_match == "all",
            created_since=created_since,
            created_until=created_until,
            include_deleted=include_deleted,
            include_sensitive=include_sensitive,
            kind=kind,
            pinned=pinned,
            include_superseded=include_superseded,
            as_of=as_of,
        )
        return await memories.list(request.user.id, filters, limit, cursor)

    @patch(
        "/{memory_id:int}",
        summary="Change a memory; new content is re-embedded and re-indexed",
        opt={DEADLINE_KIND: WRITE},
        responses={
            403: READ_ONLY,
            404: NOT_YOURS,
            409: problem(
                "Another memory in the namespace already has this content, or `valid_to` of a memory "
                "another one supersedes (`existing_id`: that memory)"
            ),
        },
    )
    async def update(
        self,
        request: AuthRequest,
        memory_id: MemoryId,
        data: JSONBody[MemoryPatch],
        memories: Service,
    ) -> Memory:
        # re-indexing, when the change needs it, is a job committed with the change
        return await memories.update(request.user.id, memory_id, data)

    @post(
        "/{memory_id:int}/promote",
        status_code=HTTP_200_OK,
        summary="Make a memory curated: an episode becomes a memory that never expires",
        description=(
            "An episode (an exchange captured from a session) becomes kind `memory`: it no longer "
            "expires, and its importance becomes the one given or at least 0.5. `pinned`, "
            "`category` and `tags`, when given, are set as a PATCH sets them (send `{}` for none). "
            "Promoting a curated memory changes only the fields given. Returns the memory."
        ),
        opt={DEADLINE_KIND: WRITE},
        responses={403: READ_ONLY, 404: NOT_YOURS},
    )
    async def promote(
        self,
        request: AuthRequest,
        memory_id: MemoryId,
        data: JSONBody[PromoteIn],
        memories: Service,
    ) -> Memory:
        return await memories.promote(
            request.user.id,
            memory_id,
            importance=data.importance,
            pinned=data.pinned,
            category=data.category,
            tags=data.tags,
        )

    @post(
        "/{memory_id:int}/restore",
        status_code=HTTP_200_OK,
        summary="Undo a soft delete",
        description=(
            "A memory deleted without `purge` is live again, and its concepts are indexed anew. "
            "A memory that is not deleted is returned as it is. 409 when a live memory of the "
            "namespace has the same content (`existing_id` names it). Returns the memory."
        ),
        opt={DEADLINE_KIND: WRITE},
        responses={
            403: READ_ONLY,
            404: NOT_YOURS,
            409: problem("A live memory of the namespace has the same content"),
        },
    )
    async def restore(self, request: AuthRequest, memory_id: MemoryId, memories: Service) -> Memory:
        return await memories.restore(request.user.id, memory_id)

    @delete(
        "/{memory_id:int}",
        status_code=HTTP_204_NO_CONTENT,
        summary="Delete a memory (soft by default; purge=true removes the row)",
        responses={403: READ_ONLY, 404: NOT_YOURS},
    )
    async def remove(
        self, request: AuthRequest, memory_id: MemoryId, memories: Service, purge: FromQuery[bool] = False
    ) -> None:
        await memories.delete(request.user.id, memory_id, purge)
