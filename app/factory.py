"""`create_app(settings)`: the one place where the service is wired together."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from litestar import Litestar, Router
from litestar.datastructures import State
from litestar.di import Provide
from litestar.middleware import DefineMiddleware
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import SwaggerRenderPlugin

from app.auth import ApiKeyMiddleware
from app.db import create_database, head_revision
from app.db.schema_check import check_embedding_dimension
from app.embeddings import Embedder, build_embedder
from app.errors import EXCEPTION_HANDLERS
from app.graph import GraphIndexer
from app.graph.routes import GraphController
from app.health import healthz, readyz
from app.hooks.routes import hook_router
from app.memories import MemoryService
from app.memories.routes import MemoryController
from app.namespaces.routes import get_namespaces
from app.recall import RecallService
from app.recall.routes import recall_memories
from app.settings import Settings


def _provide_memory_service(state: State) -> MemoryService:
    service: MemoryService = state.memory_service
    return service


def _provide_recall_service(state: State) -> RecallService:
    service: RecallService = state.recall_service
    return service


def _provide_graph_indexer(state: State) -> GraphIndexer:
    indexer: GraphIndexer = state.graph_indexer
    return indexer


def create_app(settings: Settings, embedder: Embedder | None = None) -> Litestar:
    """Build the API. `settings.database.url` must be resolved (embedded servers start earlier)."""
    url = settings.database.url
    if not url:
        raise ValueError("create_app needs a database URL; `memoria serve` starts the embedded one")
    model = embedder or build_embedder(settings.embeddings)

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        app.state.embedder_ready = False
        app.state.head_revision = head_revision()
        db = await create_database(url, settings.database)
        app.state.db = db
        try:
            await check_embedding_dimension(db.write, model.model_id, model.dimension)
            await model.load()
            if model.is_local:  # the first real request must not pay for the first inference
                await model.embed_documents(["warm up"])
            app.state.embedder_ready = True
            app.state.embedder = model
            app.state.memory_service = MemoryService(db, model, settings.memories)
            app.state.recall_service = RecallService(
                db, model, settings.recall, settings.memories.tag_limits, settings.graph
            )
            app.state.graph_indexer = GraphIndexer(
                db.write, model if settings.graph.concept_embeddings else None, settings.graph
            )
            yield
        finally:
            await db.close()
            if embedder is None:
                await model.close()

    v1 = Router(
        path="/v1",
        route_handlers=[
            MemoryController,
            get_namespaces,
            recall_memories,
            GraphController,
            hook_router(settings.hooks),
        ],
        middleware=[DefineMiddleware(ApiKeyMiddleware)],
        dependencies={
            "memories": Provide(_provide_memory_service, sync_to_thread=False),
            "recall": Provide(_provide_recall_service, sync_to_thread=False),
            "graph_indexer": Provide(_provide_graph_indexer, sync_to_thread=False),
        },
    )
    return Litestar(
        route_handlers=[healthz, readyz, v1],
        lifespan=[lifespan],
        exception_handlers=EXCEPTION_HANDLERS,
        request_max_body_size=settings.server.max_body_bytes,
        openapi_config=OpenAPIConfig(
            title="Memoria",
            version="0.1.0",
            description="Hybrid-search memory API for AI agents",
            path="/schema",
            render_plugins=[SwaggerRenderPlugin()],
        ),
        debug=False,
    )
