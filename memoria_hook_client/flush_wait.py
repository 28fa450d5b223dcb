"""The waiting flusher: sends the capture spool as soon as the server answers again.

A capture hook spools its exchanges, then flushes. When the server is down (refused, timed out, a
5xx) the exchanges stay spooled, and they would wait for the next hook event, perhaps the next
session, to be sent. So a flush stopped that way (`retried`) starts `memoria-hook flush --wait`
(`start_waiter`): a detached process (its own session, no stdio: nothing on screen, and the hook
does not wait for it) that tries again with backoff (`FIRST_PAUSE_S`, doubling up to
`MAX_PAUSE_S`) for at most `MEMORIA_CLIENT__FLUSH_WAIT_S` seconds (0: never start one). It exits as
soon as the spool is empty (sent, or its state directory is gone), when the server answers something
waiting cannot change (no key, a refused request), or when its time is up.

At most one waits: it holds an exclusive `flock` on `flush-wait.lock` for its whole life; another
one started meanwhile finds it taken and exits, and a hook that finds it taken starts none. While it
waits, `flush-wait.json` says since when, until when, how many attempts it made and the last
outcome, for `memoria status` (`waiting`). Standard library only, like the rest of the hook client.
"""

from __future__ import annotations

import contextlib
import os
import time

from memoria_hook_client.budget import BudgetSpent, HookDeadline
from memoria_hook_client.capture_worker import DETACHED_FLUSH_BUDGET_S, run_flush
from memoria_hook_client.environment import (
    DEFAULT_FLUSH_WAIT_S,
    ENV_FLUSH_WAIT,
    MAX_FLUSH_WAIT_S,
    hook_log_from_environment,
)
from memoria_hook_client.handoff import hook_command, start_detached
from memoria_hook_client.hook_log import write_log
from memoria_hook_client.spool import load
from memoria_hook_client.state import lock_file, read_json, state_dir, unlock_file, write_json_atomic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

WAIT_LOCK = "flush-wait.lock"
WAIT_FILE = "flush-wait.json"
FIRST_PAUSE_S = 1.0
#: The longest pause between two attempts: how late, at most, the spool goes after the server is back.
MAX_PAUSE_S = 20.0
#: How long a starting waiter waits for the lock: `memoria status` takes it for a moment to see
#: whether anyone holds it, which must not make the only waiter give up.
START_LOCK_WAIT_S = 1.0
#: Outcomes of `memoria_hook_client.spool.flush` that a later attempt can change by itself.
RETRIED_OUTCOMES = frozenset(
    {"unreachable", "budget", "busy", "spool-busy", "http-408", "http-425", "http-429"}
)


def wait_limit(env: Mapping[str, str]) -> float:
    """`MEMORIA_CLIENT__FLUSH_WAIT_S` within [0, MAX_FLUSH_WAIT_S]; the default when unset or not a number."""
    raw = env.get(ENV_FLUSH_WAIT, "").strip()
    try:
        value = float(raw) if raw else DEFAULT_FLUSH_WAIT_S
    except ValueError:
        return DEFAULT_FLUSH_WAIT_S
    if value != value:  # NaN
        return DEFAULT_FLUSH_WAIT_S
    return min(max(value, 0.0), MAX_FLUSH_WAIT_S)


def retried(outcome: str) -> bool:
    """Whether a flush that ended with `outcome` is worth trying again later without anyone acting:
    the server was down, slow, overloaded or failing (5xx), not a refusal only a person can fix."""
    if outcome in RETRIED_OUTCOMES:
        return True
    return outcome.startswith("http-5")


def _lock_path(env: Mapping[str, str]) -> str:
    return os.path.join(state_dir(env), WAIT_LOCK)


def _wait_path(env: Mapping[str, str]) -> str:
    return os.path.join(state_dir(env), WAIT_FILE)


def waiting(env: Mapping[str, str]) -> dict[str, Any] | None:
    """What the running waiter says about itself (`since`, `until`, `attempts`, `last_outcome`), or
    None when none runs (its lock is free: a file left by a killed one says nothing)."""
    if not os.path.exists(_lock_path(env)):
        return None
    fd = lock_file(_lock_path(env), 0.0)
    if fd is not None:
        unlock_file(fd)
        return None
    told = read_json(_wait_path(env), {})
    return told if isinstance(told, dict) else {}


def start_waiter(env: Mapping[str, str], notes: list[str]) -> bool:
    """Start the detached waiter unless waiting is off or one already waits; True when started."""
    if wait_limit(env) <= 0:
        return False
    try:
        if waiting(env) is not None:
            return False
        start_detached(hook_command(["flush", "--wait"]), env)
    except OSError as exc:
        notes.append(f"could not start the waiting flusher: {exc}")
        return False
    return True


def wait_and_flush(
    env: Mapping[str, str],
    notes: list[str],
    sleep: Callable[[float], None] = time.sleep,
) -> str:
    """Flush, pausing with backoff between attempts, until the spool is empty, an attempt ends in a
    way waiting cannot change, or the time is up; the last outcome ("already-waiting" when another
    waiter holds the lock)."""
    lock = lock_file(_lock_path(env), START_LOCK_WAIT_S)
    if lock is None:
        return "already-waiting"
    limit = wait_limit(env)
    deadline = time.monotonic() + limit
    told: dict[str, Any] = {
        "pid": os.getpid(),
        "since": _iso(time.time()),
        "until": _iso(time.time() + limit),
        "attempts": 0,
        "last_outcome": None,
    }
    pause = FIRST_PAUSE_S
    outcome = "empty"
    try:
        write_json_atomic(_wait_path(env), told)
        while load(env):
            outcome = run_flush(env, DETACHED_FLUSH_BUDGET_S, notes, wait=False)["outcome"]
            told["attempts"] += 1
            told["last_outcome"] = outcome
            if outcome in ("flushed", "empty") or not retried(outcome):
                break
            left = deadline - time.monotonic()
            if left <= 0:
                notes.append(f"the waiting flusher gave up after {limit:.0f} s: {outcome}")
                break
            write_json_atomic(_wait_path(env), told)
            sleep(min(pause, left))
            pause = min(pause * 2, MAX_PAUSE_S)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(_wait_path(env))
        unlock_file(lock)
    return outcome


def _iso(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def main(env: Mapping[str, str]) -> int:
    """`memoria-hook flush --wait`: always 0 with no output; what went wrong goes to the hook log."""
    notes: list[str] = []
    try:
        with HookDeadline(wait_limit(env) + DETACHED_FLUSH_BUDGET_S + 5):
            wait_and_flush(env, notes)
    except BudgetSpent:
        notes.append("the waiting flusher stopped at its time limit")
    except Exception as exc:  # fail quietly, whatever happened
        notes.append(f"flush --wait: unexpected {type(exc).__name__}: {exc}")
    for line in notes:
        write_log(hook_log_from_environment(env), line)
    return 0
