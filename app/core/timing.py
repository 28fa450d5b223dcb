"""Where a request's time goes, phase by phase, for the `Server-Timing` response header.

The server-timing middleware opens one `RequestTimings` per request; code on the request's path
records its phases into it (`timed("auth")`, `record("embed", ms)`), and the middleware writes them
as `Server-Timing: auth;dur=1.2, scope;dur=0.4, …, app;dur=9.8` when the response starts, `app`
being the whole time inside the application. Without an open `RequestTimings` (the header is off,
or the code runs outside a request) recording does nothing.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager


class RequestTimings:
    """Milliseconds per phase, in the order first recorded (a phase recorded twice adds up)."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.phases: dict[str, float] = {}

    def add(self, phase: str, ms: float) -> None:
        self.phases[phase] = self.phases.get(phase, 0.0) + ms

    def header(self) -> str:
        """The `Server-Timing` value: each phase, then `app`, the time since the request came in."""
        total = (time.perf_counter() - self.started) * 1000.0
        return ", ".join(f"{name};dur={ms:.2f}" for name, ms in [*self.phases.items(), ("app", total)])


_current: contextvars.ContextVar[RequestTimings | None] = contextvars.ContextVar(
    "request_timings", default=None
)


@contextmanager
def collecting() -> Iterator[RequestTimings]:
    """Open a `RequestTimings` for the code run inside (and the tasks it starts)."""
    timings = RequestTimings()
    token = _current.set(timings)
    try:
        yield timings
    finally:
        _current.reset(token)


def record(phase: str, ms: float) -> None:
    """Add `ms` to `phase` of the current request, if its timings are collected."""
    timings = _current.get()
    if timings is not None:
        timings.add(phase, ms)


@contextmanager
def timed(phase: str) -> Iterator[None]:
    """Record the time spent inside as `phase` (also when it raises)."""
    began = time.perf_counter()
    try:
        yield
    finally:
        record(phase, (time.perf_counter() - began) * 1000.0)


def parse_server_timing(value: str) -> dict[str, float]:
    """`{phase: ms}` from a `Server-Timing` value as `RequestTimings.header` writes it."""
    phases: dict[str, float] = {}
    for part in value.split(","):
        name, _, params = part.strip().partition(";")
        for param in params.split(";"):
            key, _, number = param.strip().partition("=")
            if key == "dur" and name:
                try:
                    phases[name] = float(number)
                except ValueError:
                    continue
    return phases
