"""ASGI middleware wrapped around every route (the request deadline) and what the app adds to every
answer (security headers, CORS when configured)."""

from app.middleware.cors import cors_config
from app.middleware.deadline import DEADLINE_ANSWER, RequestDeadlineMiddleware
from app.middleware.headers import security_headers

__all__ = ["DEADLINE_ANSWER", "RequestDeadlineMiddleware", "cors_config", "security_headers"]
