"""Liveness and readiness probes."""

from app.health.routes import READY_DATABASE_TIMEOUT_S, healthz, readiness_checks, readyz

__all__ = ["READY_DATABASE_TIMEOUT_S", "healthz", "readiness_checks", "readyz"]
