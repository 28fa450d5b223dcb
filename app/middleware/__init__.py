"""ASGI middleware wrapped around every route (the request deadline, the optional Server-Timing
header) and what the app adds to every answer (security headers, CORS when configured)."""

from app.middleware.cors import cors_config
from app.middleware.deadline import DEADLINE_ANSWER, RequestDeadlineMiddleware
from app.middleware.headers import UI_OPT, security_headers
from app.middleware.server_timing import ServerTimingMiddleware, server_timing_header

__all__ = [
    "DEADLINE_ANSWER",
    "UI_OPT",
    "RequestDeadlineMiddleware",
    "ServerTimingMiddleware",
    "cors_config",
    "security_headers",
    "server_timing_header",
]
