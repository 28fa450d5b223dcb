"""ASGI middleware wrapped around every route: the request deadline."""

from app.middleware.deadline import DEADLINE_ANSWER, RequestDeadlineMiddleware

__all__ = ["DEADLINE_ANSWER", "RequestDeadlineMiddleware"]
