"""Liveness and readiness probes."""

from app.health.routes import healthz, readyz

__all__ = ["healthz", "readyz"]
