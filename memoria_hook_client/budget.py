"""The command hook's hard time budget: how long it may take, since when, and the timer that ends it.

Claude Code waits for the hook before it sends the prompt, so the hook owns a total budget counted
from its own spawn (not from `main()`: `memoria hook user-prompt-submit` spends a good part of a
second importing before `main()` runs). Socket timeouts alone are not enough because they restart
on every byte a slow server trickles, hence a wall-clock timer signal. Standard library only, and
neither `threading` nor `contextlib` (their imports add to every hook's start-up): `signal.signal`
already refuses to run outside the main thread, which is the one check needed.
"""

from __future__ import annotations

import os
import signal

from memoria_hook_client.environment import DEFAULT_HOOK_BUDGET_S, ENV_HOOK_BUDGET

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from types import FrameType
    from typing import Any

    Handler = Callable[[int, FrameType | None], Any] | int | None

MAX_BUDGET_S = 60.0


class BudgetSpent(BaseException):
    """Raised by the timer signal; a BaseException so no `except Exception` on the way swallows it."""


def hook_budget(env: Mapping[str, str]) -> tuple[float, str | None]:
    """Seconds from `MEMORIA_CLIENT__HOOK_BUDGET_S` (default 1.5), and a warning when it was unusable."""
    raw = env.get(ENV_HOOK_BUDGET)
    if not raw:
        return DEFAULT_HOOK_BUDGET_S, None
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value <= MAX_BUDGET_S:
        return DEFAULT_HOOK_BUDGET_S, f"ignoring {ENV_HOOK_BUDGET}={raw!r} (want seconds in (0, 60])"
    return value, None


def process_age() -> float:
    """Seconds since this process started (Linux; 0 elsewhere), so the budget runs from the spawn."""
    try:
        with open("/proc/self/stat", encoding="ascii") as stat_file:
            # the command name (field 2) may hold spaces and parentheses: count from its last ")"
            start_ticks = int(stat_file.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as uptime_file:
            uptime = float(uptime_file.read().split()[0])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


class HookDeadline:
    """`with HookDeadline(seconds):` raises BudgetSpent in the body once `seconds` of wall time have passed.

    Without a timer (not the main thread, or no `setitimer` on this OS) the body runs unguarded and
    the socket timeouts are all that bound it.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = max(seconds, 0.001)
        self._previous: Handler = None
        self._armed = False

    def __enter__(self) -> HookDeadline:
        if hasattr(signal, "setitimer"):
            try:
                self._previous = signal.signal(signal.SIGALRM, _expire)
            except ValueError:  # not the main thread: signals cannot be handled here
                return self
            self._armed = True
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._previous)
            self._armed = False


def _expire(_signum: int, _frame: FrameType | None) -> None:
    raise BudgetSpent
