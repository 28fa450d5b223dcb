"""RFC 9457 problem+json answers for every error, so clients always get a readable 4xx body."""

from __future__ import annotations

import logging
import math
from types import TracebackType
from typing import Any

import asyncpg
import msgspec
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi import ResponseSpec
from litestar.status_codes import HTTP_500_INTERNAL_SERVER_ERROR, HTTP_503_SERVICE_UNAVAILABLE

log = logging.getLogger(__name__)

PROBLEM_MEDIA_TYPE = "application/problem+json"


class Problem(msgspec.Struct, kw_only=True):
    """An error answer (RFC 9457, `application/problem+json`): what went wrong, for a person to read.

    `errors` lists each field that failed validation (422); some answers add a field of their own,
    e.g. `existing_id` on a 409 names the memory that already holds the content.
    """

    type: str
    title: str
    status: int
    detail: str
    errors: list[dict[str, Any]] | msgspec.UnsetType = msgspec.UNSET


def problem(description: str) -> ResponseSpec:
    """OpenAPI: a route answers this status with a problem body (`responses={404: problem("...")}`)."""
    return ResponseSpec(
        data_container=Problem,
        description=description,
        media_type=PROBLEM_MEDIA_TYPE,
        generate_examples=False,
    )


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


class Forbidden(ApiError):
    """The key is valid but lacks the scope the route needs (`required_scope` names it)."""

    status_code = 403


class TooManyRequests(ApiError):
    """A rate limit refused the request; `Retry-After` says when a retry can pass (whole seconds, ≥ 1)."""

    status_code = 429

    def __init__(self, detail: str, *, retry_after_s: float, **extra: Any) -> None:
        super().__init__(detail, **extra)
        self.retry_after = max(1, math.ceil(retry_after_s))
        self.headers = {"Retry-After": str(self.retry_after)}


def _problem(
    status: int, title: str, detail: str, extra: Any = None, headers: dict[str, str] | None = None
) -> Response[dict[str, Any]]:
    body: dict[str, Any] = {"type": "about:blank", "title": title, "status": status, "detail": detail}
    if isinstance(extra, dict):
        body.update(extra)
    elif isinstance(extra, list) and extra:
        body["errors"] = extra
    return Response(content=body, status_code=status, media_type=PROBLEM_MEDIA_TYPE, headers=headers)


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
        # A body or parameter that parsed but does not fit the schema: 422, with msgspec's precise
        # message prefixed by the field it is about (a query parameter's message does not name it).
        messages = [_located(e) for e in (extra or []) if isinstance(e, dict)]
        status = 422
        detail = "; ".join(m for m in messages if m) or detail
    elif _caused_by_bad_json(exc):
        detail = f"request body is not valid JSON: {detail}"
    # The exception's headers are part of the answer: `Allow` on a 405, `WWW-Authenticate` on a 401.
    return _problem(status, _title(status), detail, extra, headers=exc.headers)


def _located(error: dict[str, Any]) -> str:
    message = str(error.get("message", ""))
    key = error.get("key")
    return f"{key}: {message}" if key and message else message


# What a 503 tells the client to wait before trying again: a restarted or failed-over PostgreSQL is
# usually back within seconds, and the hook and the CLI retry on their own.
RETRY_AFTER_S = 1


def unavailable(detail: str) -> Response[dict[str, Any]]:
    """503 with `Retry-After`: the request was fine, the service cannot answer it right now."""
    return _problem(
        HTTP_503_SERVICE_UNAVAILABLE,
        _title(HTTP_503_SERVICE_UNAVAILABLE),
        detail,
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )


def _raised_in_asyncpg(tb: TracebackType | None) -> bool:
    while tb is not None:
        module = str(tb.tb_frame.f_globals.get("__name__", ""))
        if module == "asyncpg" or module.startswith("asyncpg."):
            return True
        tb = tb.tb_next
    return False


def database_unavailable(exc: BaseException) -> str | None:
    """Why `exc` means PostgreSQL cannot answer right now (the answer is a 503), or None.

    Unreachable (refused, no socket, connection lost or broken, shutting down, too many connections) and
    hung or overloaded (a bound on the pool, a connect, a statement or a `statement_timeout` was
    reached) are conditions a retry can outlive; everything else stays a 500, a bug to fix.
    """
    if isinstance(exc, asyncpg.QueryCanceledError):
        return "the database did not finish in time (statement timeout)"
    if isinstance(exc, TimeoutError):
        return "the database did not answer in time"
    if isinstance(
        exc,
        asyncpg.PostgresConnectionError  # class 08: connection failures
        | asyncpg.OperatorInterventionError  # class 57: shutting down, starting up, crashed
        | asyncpg.TooManyConnectionsError
        | asyncpg.ConnectionDoesNotExistError,  # the server closed the connection mid-request
    ):
        return f"the database is unavailable ({type(exc).__name__})"
    if isinstance(exc, asyncpg.InternalClientError):
        # the connection's protocol state broke, e.g. PostgreSQL ended the session (its FATAL message
        # came, the socket's end not yet): "cannot switch to state 15" on the next BEGIN. The pool
        # terminates such a connection (app/db/pool.py), so a retry gets a new one.
        return f"the database connection broke ({type(exc).__name__})"
    if isinstance(exc, asyncpg.InterfaceError):
        if "pool is closing" in str(exc):
            return "the service is shutting down"
        # raised while a connection failure was being handled: asyncpg's `Transaction.__aexit__`
        # ("the underlying connection is closed") or a released connection's own check, in place of
        # the failure itself. The failure decides.
        context = exc.__cause__ or exc.__context__
        if context is not None and context is not exc:
            return database_unavailable(context)
    if isinstance(exc, OSError) and _raised_in_asyncpg(exc.__traceback__):
        return f"the database is unreachable ({type(exc).__name__})"
    return None


def internal_error_handler(request: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    reason = database_unavailable(exc)
    if reason is not None:
        log.warning("%s %s: 503, %s: %r", request.method, request.url.path, reason, exc)
        return unavailable(reason)
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return _problem(
        HTTP_500_INTERNAL_SERVER_ERROR, "Internal Server Error", "the server failed to handle this request"
    )


EXCEPTION_HANDLERS: dict[int | type[Exception], Any] = {
    HTTPException: http_exception_handler,
    Exception: internal_error_handler,
}
