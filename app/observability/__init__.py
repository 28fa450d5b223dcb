"""Observability at the HTTP edge: request ids and request metrics on every request, the `/metrics`
exposition and the gauges read when it is scraped (pools, job queue). The instruments themselves are
in `app.core.metrics`, so domain services record without importing this adapter."""

from app.observability.asgi import RequestObserver
from app.observability.routes import Scrape, metrics_route
from app.observability.settings import MetricsSettings

__all__ = ["MetricsSettings", "RequestObserver", "Scrape", "metrics_route"]
