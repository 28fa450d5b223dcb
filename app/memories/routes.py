"""HTTP routes of the memory API: thin handlers over `MemoryService`."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from litestar import Controller, Request, Response, delete, get, patch, post
from litestar.background_tasks import BackgroundTask
from litestar.di import NamedDependency
from litestar.params import FromQuery, JSONBody, PathParameter, QueryParameter
from litestar.status_codes import HTTP_200_OK, HTTP_201_CREATED, HTTP_204_NO_CONTENT
from msgspec import UNSET

from app.auth import AuthUser
from app.graph import GraphIndexer
from app.memories.schemas import Memory, MemoryIn, MemoryPage, MemoryPatch, StoreBatchResult, StoreResult
from app.memories.service import ListFilters, MemoryService

AuthRequest = Request[AuthUser, int, Any]
MemoryId = Annotated[int, PathParameter(ge=1, le=2**63 - 1, description="Memory id")]
Service = NamedDependency[MemoryService]
Indexer = NamedDependency[GraphIndexer]


class MemoryController(Controller):
    path = "/memories"
    tags = ["memories"]

    @post(
        "/",
        status_code=HTTP_201_CREATED,
        summary="Store one memory (JSON object) or a batch (JSON array, at most 100)",
    )
    async def store(
        self,
        request: AuthRequest,
        data: JSONBody[MemoryIn | list[MemoryIn]],
        memories: Service,
        graph_indexer: Indexer,
    ) -> Response[StoreResult | StoreBatchResult]:
        batch = isinstance(data, list)
        results = await memories.store(request.user.id, data if isinstance(data, list) else [data])
        # Concepts are extracted after the memories are committed and after the answer is sent.
        new_ids = [r.id for r in results if not r.duplicate]
        background = BackgroundTask(graph_indexer.index_quietly, new_ids, fresh=True) if new_ids else None
        if batch:
            return Response(
                StoreBatchResult(results=results), status_code=HTTP_201_CREATED, background=background
            )
        (result,) = results
        status = HTTP_200_OK if result.duplicate else HTTP_201_CREATED
        return Response(result, status_code=status, background=background)

    @get("/{memory_id:int}", summary="Read one memory")
    async def read(
        self,
        request: AuthRequest,
        memory_id: MemoryId,
        memories: Service,
        include_deleted: FromQuery[bool] = False,
    ) -> Memory:
        return await memories.get(request.user.id, memory_id, include_deleted)

    @get("/", summary="List memories, newest first, with cursor pagination")
    async def list_memories(
        self,
        request: AuthRequest,
        memories: Service,
        namespace: FromQuery[list[str] | None] = None,
        category: FromQuery[str | None] = None,
        tags: FromQuery[list[str] | None] = None,
        tags_match: FromQuery[Literal["any", "all"]] = "any",
        created_since: FromQuery[datetime | None] = None,
        created_until: FromQuery[datetime | None] = None,
        include_deleted: FromQuery[bool] = False,
        include_sensitive: FromQuery[bool] = False,
        limit: Annotated[int, QueryParameter(ge=1, le=200)] = 50,
        cursor: FromQuery[str | None] = None,
    ) -> MemoryPage:
        filters = ListFilters(
            namespaces=namespace,
            category=category,
            tags=tags,
            tags_match_all=tags_match == "all",
            created_since=created_since,
            created_until=created_until,
            include_deleted=include_deleted,
            include_sensitive=include_sensitive,
        )
        return await memories.list(request.user.id, filters, limit, cursor)

    @patch("/{memory_id:int}", summary="Change a memory; new content is re-embedded and re-indexed")
    async def update(
        self,
        request: AuthRequest,
        memory_id: MemoryId,
        data: JSONBody[MemoryPatch],
        memories: Service,
        graph_indexer: Indexer,
    ) -> Response[Memory]:
        memory = await memories.update(request.user.id, memory_id, data)
        # Re-extract only when something the extractor reads (or its sensitivity filter) changed.
        graph_inputs = (data.content, data.tags, data.expanded_keywords, data.is_sensitive)
        if all(value is UNSET for value in graph_inputs):
            return Response(memory)
        return Response(memory, background=BackgroundTask(graph_indexer.index_quietly, [memory.id]))

    @delete(
        "/{memory_id:int}",
        status_code=HTTP_204_NO_CONTENT,
        summary="Delete a memory (soft by default; purge=true removes the row)",
    )
    async def remove(
        self, request: AuthRequest, memory_id: MemoryId, memories: Service, purge: FromQuery[bool] = False
    ) -> None:
        await memories.delete(request.user.id, memory_id, purge)
