"""Deadlines: how long the work for one request may still take, and waiting that never outlives it.

Every HTTP request runs under a `Deadline` (the request-deadline middleware sets it); code that waits
on something outside the process (the pool, PostgreSQL) asks `remaining()` how long it may wait. A
hung PostgreSQL (stopped, or a network partition) answers nothing, so without a bound a request would
wait out asyncpg's own timeouts (10 s per statement, 60 s per connect); with one it fails in time.

`within` is the one way to wait for work with a bound and *not* wait for its clean-up when the bound
is reached: `asyncio.timeout` and `asyncio.wait_for` cancel the work and then wait for it to unwind,
and unwinding a database call on a hung server (a ROLLBACK, the cancel handshake of the statement that
was running) waits on the same server that hung. `within` cancels the work and lets it unwind in the
background; its own clean-up is bounded by the pool's and asyncpg's timeouts.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

# A route's opt naming the deadline it runs under (the request middleware reads it): WRITE is for
# routes that embed what they store, a batch of 100 memories being 100 model calls.
DEADLINE_KIND = "deadline"
WRITE = "write"


@dataclass(frozen=True, slots=True)
class Deadline:
    """A point in `time.monotonic()` time (the event loop's clock) by which work must be done."""

    started: float
    at: float

    @classmethod
    def after(cls, seconds: float, *, started: float | None = None) -> Deadline:
        """`seconds` after `started` (default: now)."""
        start = time.monotonic() if started is None else started
        return cls(started=start, at=start + max(seconds, 0.0))

    @property
    def budget_s(self) -> float:
        """The whole time this deadline allowed, for messages."""
        return self.at - self.started

    def remaining(self) -> float:
        """Seconds left, never below 0."""
        return max(self.at - time.monotonic(), 0.0)

    @property
    def expired(self) -> bool:
        return time.monotonic() >= self.at

    def tighter(self, other: Deadline | None) -> Deadline:
        """The earlier of this deadline and `other`."""
        return self if other is None or self.at <= other.at else other


_current: contextvars.ContextVar[Deadline | None] = contextvars.ContextVar("memoria_deadline", default=None)


def current() -> Deadline | None:
    """The deadline the running code is under (None outside any request, e.g. background jobs)."""
    return _current.get()


@contextmanager
def bounded_by(deadline: Deadline) -> Iterator[Deadline]:
    """Run the block (and every task it starts, which copy the context) under `deadline`, or under the
    one already in force if that is earlier: a nested bound can only shorten the wait."""
    effective = deadline.tighter(_current.get())
    token = _current.set(effective)
    try:
        yield effective
    finally:
        _current.reset(token)


def remaining(cap: float | None = None) -> float | None:
    """How long a wait may last: the current deadline's time left, at most `cap` (None: no bound)."""
    deadline = _current.get()
    left = None if deadline is None else deadline.remaining()
    if cap is None:
        return left
    return cap if left is None else min(cap, left)


# Work cancelled by `within` that is still unwinding: referenced here so it is not garbage-collected
# half-way (asyncio keeps only weak references to tasks).
_unwinding: set[asyncio.Task[Any]] = set()


def _forget(task: asyncio.Task[Any]) -> None:
    _unwinding.discard(task)
    if not task.cancelled() and (exc := task.exception()) is not None:
        log.debug("work cancelled at its deadline ended with %r", exc)


def detach(task: asyncio.Task[Any]) -> None:
    """Cancel `task` and let it unwind on its own: nobody waits for it, its outcome is only logged."""
    task.cancel()
    if not task.done():
        _unwinding.add(task)
        task.add_done_callback(_forget)


async def within(work: Coroutine[Any, Any, T], deadline: Deadline) -> T:
    """The result of `work`, run in its own task under `deadline`; TimeoutError when it is reached.

    On the deadline the task is cancelled and detached, so the caller answers at the deadline even
    when the work's clean-up would wait on a hung server. An exception of the work is raised as is.
    If the caller itself is cancelled, the work is cancelled (and detached) too.
    """
    effective = deadline.tighter(_current.get())
    context = contextvars.copy_context()
    context.run(_current.set, effective)
    task: asyncio.Task[T] = asyncio.get_running_loop().create_task(work, context=context)
    try:
        done, _ = await asyncio.wait({task}, timeout=effective.remaining())
    except BaseException:
        detach(task)
        raise
    if task not in done:
        detach(task)
        raise TimeoutError(f"not done within {effective.budget_s:.3g} s")
    return task.result()
