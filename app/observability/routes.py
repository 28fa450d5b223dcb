"""`GET /metrics`: the Prometheus exposition, for a scraper holding the metrics token."""

from __future__ import annotations

import hmac
from collections.abc import Callable, Sequence
from typing import Any

from litestar import Request, Response, get
from litestar.exceptions import NotAuthorizedException
from litestar.handlers import HTTPRouteHandler
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder
from pydantic import SecretStr

from app.db import Database
from app.observability.collectors import JobQueueCollector, PoolCollector


class Scrape:
    """What `/metrics` renders: the app's registry, plus the database's gauges while its pools live
    (registered by the lifespan, removed by `close`). The job queue is read first, within its
    timeout; everything else is already in memory."""

    def __init__(
        self, registry: CollectorRegistry, db: Database, job_kinds: Callable[[], Sequence[str]]
    ) -> None:
        self._registry = registry
        self._jobs = JobQueueCollector(db.write, job_kinds)
        self._collectors = (PoolCollector(db), self._jobs)
        for collector in self._collectors:
            registry.register(collector)

    async def render(self, accept: str) -> tuple[bytes, str]:
        """The exposition in the format `accept` asks for (OpenMetrics or Prometheus text)."""
        await self._jobs.refresh()
        encode, content_type = choose_encoder(accept)
        return encode(self._registry), content_type

    def close(self) -> None:
        for collector in self._collectors:
            self._registry.unregister(collector)


def metrics_route(token: SecretStr) -> HTTPRouteHandler:
    """The route, answering 401 unless `Authorization: Bearer <token>` (compared in constant time)."""
    expected = token.get_secret_value().encode()

    @get("/metrics", include_in_schema=False)
    async def metrics(request: Request[Any, Any, Any]) -> Response[bytes]:
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), expected):
            raise NotAuthorizedException("/metrics needs `Authorization: Bearer <MEMORIA_METRICS__TOKEN>`")
        scrape: Scrape = request.app.state.scrape
        body, content_type = await scrape.render(request.headers.get("accept", ""))
        # as a header: Litestar would add a second `charset` to a `text/` media type
        return Response(body, media_type=content_type, headers={"content-type": content_type})

    return metrics
