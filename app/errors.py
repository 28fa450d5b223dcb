"""RFC 9457 problem+json answers for every error, so clients always get a readable 4xx body."""

from __future__ import annotations

import logging
from typing import Any

import msgspec
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.status_codes import HTTP_500_INTERNAL_SERVER_ERROR

log = logging.getLogger(__name__)

PROBLEM_MEDIA_TYPE = "application/problem+json"


class ApiError(HTTPException):
    """An error we raise on purpose, with a status code and a message meant for the client."""

    status_code = 400

    def __init__(self, detail: str, *, status_code: int | None = None, **extra: Any) -> None:
        super().__init__(detail=detail, status_code=status_code or self.status_code, extra=extra or None)


class InvalidInput(ApiError):
    status_code = 422


class NotFound(ApiError):
    status_code = 404


class Conflict(ApiError):
    status_code = 409


def _problem(status: int, title: str, detail: str, extra: Any = None) -> Response[dict[str, Any]]:
    body: dict[str, Any] = {"type": "about:blank", "title": title, "status": status, "detail": detail}
    if isinstance(extra, dict):
        body.update(extra)
    elif isinstance(extra, list) and extra:
        body["errors"] = extra
    return Response(content=body, status_code=status, media_type=PROBLEM_MEDIA_TYPE)


def _caused_by_bad_json(exc: BaseException) -> bool:
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, msgspec.DecodeError) and not isinstance(cause, msgspec.ValidationError):
            return True
        cause = cause.__cause__
    return False


def _title(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def http_exception_handler(_: Request[Any, Any, Any], exc: HTTPException) -> Response[dict[str, Any]]:
    status = exc.status_code
    detail = exc.detail
    extra = exc.extra
    if isinstance(exc, ValidationException):
        # A body that parsed but does not fit the schema: 422, with msgspec's precise message.
        messages = [str(e.get("message", "")) for e in (extra or []) if isinstance(e, dict)]
        status = 422
        detail = "; ".join(m for m in messages if m) or detail
    elif _caused_by_bad_json(exc):
        detail = f"request body is not valid JSON: {detail}"
    return _problem(status, _title(status), detail, extra)


def internal_error_handler(request: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return _problem(
        HTTP_500_INTERNAL_SERVER_ERROR, "Internal Server Error", "the server failed to handle this request"
    )


EXCEPTION_HANDLERS: dict[int | type[Exception], Any] = {
    HTTPException: http_exception_handler,
    Exception: internal_error_handler,
}
