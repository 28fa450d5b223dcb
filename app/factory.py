"""`create_app(settings)`: the one place where the service is wired together."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from litestar import Litestar, Router
from litestar.datastructures import State
from litestar.di import Provide
from litestar.middleware import DefineMiddleware
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme

from app.auth import ApiKeyMiddleware
from app.auth.gate import Gate
from app.auth.routes import get_me
from app.auth.scopes import ADMIN, SCOPE_OPT
from app.capture.routes import capture_route
from app.capture.service import CaptureService
from app.core.metrics import Metrics
from app.db import create_database, head_revision
from app.db.schema_check import check_embedding_dimension
from app.db.warmup import Warmer
from app.embeddings import Embedder, build_embedder
from app.embeddings.backfill import EMBED_JOB, EmbeddingJobs
from app.embeddings.instrumented import instrument
from app.errors import EXCEPTION_HANDLERS
from app.graph import INDEX_JOB, GraphIndexer
from app.graph.extract import warm_up as warm_concept_words
from app.graph.routes import GraphController
from app.health import healthz, readyz
from app.hooks.hosts import HOSTS
from app.hooks.routes import hook_routers
from app.http import TYPE_DECODERS, ApiRequest, before_request
from app.jobs import JobWorker
from app.links import LinkService
from app.links.routes import LinkController, list_namespace_links
from app.links.supersede import supersede_when_embedded
from app.links.supersede_rule import warm_up as warm_supersede_rule
from app.mcp.endpoint import McpEndpoint
from app.memories import MemoryService
from app.memories.expiry import EXPIRE_JOB, ExpiryJobs
from app.memories.merge_routes import merge_namespace, rename_own_namespace
from app.memories.routes import MemoryController
from app.middleware import (
    RequestDeadlineMiddleware,
    ServerTimingMiddleware,
    cors_config,
    security_headers,
    server_timing_header,
)
from app.namespaces.routes import get_namespaces
from app.namespaces.share_routes import share_routes
from app.observability import RequestObserver, Scrape, metrics_route
from app.openapi import LocalSwaggerUI, OpenAPIJsonPlugin
from app.recall import RecallService
from app.recall.query_shape import warm_up as warm_query_shapes
from app.recall.routes import recall_memories
from app.recall.term_counts import TERM_COUNT_JOB, TermCounts
from app.secrets import warm_secret_catalog
from app.settings import Settings
from app.ui import template_config, ui_router

POOL_CLOSE_TIMEOUT_S = 5.0


def _provide_memory_service(state: State) -> MemoryService:
    service: MemoryService = state.memory_service
    return service


def _provide_link_service(state: State) -> LinkService:
    service: LinkService = state.link_service
    return service


def _provide_recall_service(state: State) -> RecallService:
    service: RecallService = state.recall_service
    return service


def _provide_capture_service(state: State) -> CaptureService:
    service: CaptureService = state.capture_service
    return service


def _provide_graph_indexer(state: State) -> GraphIndexer:
    indexer: GraphIndexer = state.graph_indexer
    return indexer


def create_app(settings: Settings, embedder: Embedder | None = None) -> Litestar:
    """Build the API. `settings.database.url` must be resolved (embedded servers start earlier)."""
    url = settings.database.url
    if not url:
        raise ValueError("create_app needs a database URL; `memoria serve` starts the embedded one")
    metrics = Metrics()  # this app's registry: what /metrics exposes
    model = instrument(embedder or build_embedder(settings.embeddings), metrics.embeddings)

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        app.state.embedder_ready = False
        app.state.head_revision = head_revision()
        db = await create_database(url, settings.database)
        app.state.db = db
        warmup = Warmer(db.read, settings.database.warmup_timeout_s)
        app.state.warmup = warmup  # /readyz says "warming up" while it runs
        jobs = JobWorker(db.write, settings.jobs, metrics.jobs)
        app.state.jobs = jobs  # `stop(grace_s)` drains it; tests drain the queue with `run_pending()`
        app.state.scrape = Scrape(metrics.registry, db, lambda: jobs.kinds)  # pool and queue gauges
        try:
            await check_embedding_dimension(db.write, model.model_id, model.dimension)
            await model.load()
            if model.is_local:  # the first real request must not pay for the first inference
                await model.embed_documents(["warm up"])
            if settings.links.auto_supersede:  # its word list, off the first store's path
                await asyncio.to_thread(warm_supersede_rule)
            await asyncio.to_thread(warm_secret_catalog)  # compiling its rules, off the first store's path
            await asyncio.to_thread(warm_concept_words)  # recall seeds and indexing read its word lists
            await asyncio.to_thread(warm_query_shapes)  # every recall reads the query's shape
            app.state.embedder_ready = True
            app.state.embedder = model
            app.state.memory_service = MemoryService(
                db,
                model,
                settings.memories,
                jobs=jobs.queue,
                index_graph=settings.graph.enabled,
                secrets=settings.secrets,  # redaction on every write; originals sealed when keys are set
                links=settings.links,  # the automatic supersede on store
                namespaces=settings.namespaces,  # the cap on a user's own namespaces
                turn_context=settings.embeddings.turn_context,  # what captured turns are embedded with
            )
            app.state.link_service = LinkService(db)
            app.state.recall_service = RecallService(
                db,
                model,
                settings.recall,
                settings.memories.tag_limits,
                settings.graph,
                metrics.recall,
                episode_ttl_days=settings.memories.episode_ttl_days,  # recalled episodes live on
            )
            app.state.capture_service = CaptureService(
                app.state.memory_service, settings.capture, settings.memories, db, metrics.capture
            )
            app.state.graph_indexer = GraphIndexer(
                db.write, model if settings.graph.concept_embeddings else None, settings.graph
            )
            # durable after-commit work: rows in `jobs`, worked by a bounded pool of loops
            jobs.register(INDEX_JOB, app.state.graph_indexer.run_jobs)
            # a captured episode gets its vector here: then the automatic supersede judges it
            embedding_jobs = EmbeddingJobs(
                db.write, model, supersede_when_embedded(settings.links), settings.embeddings.turn_context
            )
            jobs.register(EMBED_JOB, embedding_jobs.run, reconcile=embedding_jobs.reconcile)
            expiry = ExpiryJobs(db.write, settings.memories)  # self-rescheduling; reconcile keeps one
            jobs.register(EXPIRE_JOB, expiry.run, reconcile=expiry.reconcile)
            # the lexical leg's term counts, after every change a trigger saw (migration 0018)
            jobs.register(TERM_COUNT_JOB, TermCounts(db.write).run)
            await jobs.start()
            # Bounded, before uvicorn listens; the watcher warms again whenever PostgreSQL restarts.
            await warmup.warm()
            warmup.start_watching()
            yield
        finally:
            # Shutdown order: uvicorn has stopped accepting and drained in-flight requests (within
            # MEMORIA_SERVER__SHUTDOWN_TIMEOUT_S) before this runs; then the warm-up watcher, the
            # background jobs (bounded), the pools (bounded); `memoria serve` stops the embedded
            # PostgreSQL after the app has returned.
            app.state.scrape.close()
            await warmup.close()
            await jobs.stop()  # running jobs get settings.jobs.stop_timeout_s, then go back to the queue
            try:
                await asyncio.wait_for(db.close(), POOL_CLOSE_TIMEOUT_S)
            except TimeoutError:  # a connection still held: drop them all rather than hang the exit
                db.write.terminate()
                db.read.terminate()
            if embedder is None:
                await model.close()

    services = {
        "memories": Provide(_provide_memory_service, sync_to_thread=False),
        "recall": Provide(_provide_recall_service, sync_to_thread=False),
        "links": Provide(_provide_link_service, sync_to_thread=False),
    }
    v1 = Router(
        path="/v1",
        route_handlers=[
            MemoryController,
            LinkController,
            list_namespace_links,
            get_namespaces,
            rename_own_namespace,
            merge_namespace,
            get_me,
            *share_routes({SCOPE_OPT: ADMIN}),  # managing shares needs an admin key
            recall_memories,
            *[capture_route(host.name, host.label) for host in HOSTS.values()],
            GraphController,
            # per host: user-prompt-submit, session-start
            *hook_routers(settings.hooks, settings.server.max_body_bytes),
        ],
        middleware=[DefineMiddleware(ApiKeyMiddleware)],
        security=[{"apiKey": []}],
        dependencies={
            **services,
            "graph_indexer": Provide(_provide_graph_indexer, sync_to_thread=False),
            "capture": Provide(_provide_capture_service, sync_to_thread=False),
        },
    )
    operations = [metrics_route(settings.metrics.token)] if settings.metrics.token else []
    # /mcp, the agent's memory tools: its session manager runs in a second lifespan, after the services exist
    mcp = McpEndpoint(settings.mcp, settings.server.request_deadline_ms, settings.server.max_body_bytes)
    mcp_routes, mcp_lifespans = ([mcp.route], [mcp.lifespan]) if settings.mcp.enabled else ([], [])
    # the web UI under `/`: pages for a person, signed in with a session cookie (app/ui)
    ui = [ui_router(services)] if settings.ui.enabled else []
    app = Litestar(
        route_handlers=[healthz, readyz, v1, *operations, *mcp_routes, *ui],
        template_config=template_config() if settings.ui.enabled else None,
        lifespan=[lifespan, *mcp_lifespans],
        exception_handlers=EXCEPTION_HANDLERS,
        # outermost route middleware: Server-Timing (when on) covers all; the deadline covers authentication
        # as well as the handler
        middleware=[
            *([DefineMiddleware(ServerTimingMiddleware)] if settings.server.server_timing else []),
            DefineMiddleware(
                RequestDeadlineMiddleware,
                deadline_ms=settings.server.request_deadline_ms,
                write_deadline_ms=settings.server.write_deadline_ms,
            ),
        ],
        request_class=ApiRequest,  # strict JSON bodies (app/http.py)
        type_decoders=TYPE_DECODERS,
        before_request=before_request,
        # nosniff, no-store …: every answer, 404s and errors too; and the request's phases when asked
        before_send=[security_headers, *([server_timing_header] if settings.server.server_timing else [])],
        cors_config=cors_config(settings.server.cors_origins),  # None (off) unless origins are set
        request_max_body_size=settings.server.max_body_bytes,
        openapi_config=OpenAPIConfig(
            title="Memoria",
            version="0.1.0",
            description="Hybrid-search memory API for AI agents",
            path="/schema",
            render_plugins=[LocalSwaggerUI(), OpenAPIJsonPlugin()],  # assets served here, no CDN
            components=Components(
                security_schemes={
                    "apiKey": SecurityScheme(
                        type="http",
                        scheme="bearer",
                        description="`memoria keys create --user NAME --create-user` prints a key",
                    )
                }
            ),
        ),
        debug=False,
        logging_config=None,  # the process configures logging (`memoria serve`: app.core.logs), not the app
    )
    # before routing, so every request (404s too) gets a request id and is timed
    app.asgi_handler = RequestObserver(app.asgi_handler, metrics.http)
    app.state.metrics = metrics
    app.state.ui_settings = settings.ui
    app.state.gate = Gate(settings.auth, metrics.rate_limits)  # key lookup + rate limits, one statement
    return app
