"""Keep the embedded PostgreSQL of `memoria serve` running: restart its postmaster when it dies.

Without this a crashed or killed postmaster stayed down until someone restarted Memoria by hand.
A thread waits on the postmaster's pidfd (the kernel wakes it when the process exits, though it is
not our child: pg_ctl daemonises it), logs why it went, and starts it again with exponential
backoff. The app's asyncpg pools need no help: connections the dead server closed are discarded
on their next acquire and replaced by new ones once PostgreSQL listens again on the same socket.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import threading
import time
from collections.abc import Callable

from app.db.embedded import EmbeddedPostgres, log_tail, process_alive

log = logging.getLogger(__name__)

FIRST_BACKOFF_S = 0.5  # long enough for the dead postmaster's backends to notice and let go of its memory
_POLL_S = 1.0  # without pidfd (not Linux): how often the pid is checked


class EmbeddedServerLost(RuntimeError):
    """The embedded PostgreSQL died and could not be started again."""


def exit_reason(pid: int) -> str:
    """How the process ended, when the kernel tells us (only if it was our child, e.g. under PID 1)."""
    try:
        waited, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return "exit status unknown (not a child of this process)"
    if waited == 0:
        return "exit status not reported yet"
    if os.WIFSIGNALED(status):
        return f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exited with status {os.WEXITSTATUS(status)}"


def terminate_this_process(reason: str) -> None:
    """Ask this process to shut down the way SIGTERM does (requests drained, pools closed)."""
    log.error("stopping memoria serve: %s", reason)
    os.kill(os.getpid(), signal.SIGTERM)


class PostmasterSupervisor:
    """Restarts the embedded postmaster whenever it dies, until told to stop.

    The wait before a restart doubles from `FIRST_BACKOFF_S` to `max_backoff_s`. Restarts count as
    one streak until the postmaster has stayed up for `max_backoff_s`, so a server that dies right
    after every start is not restarted forever: after `attempts` restarts in a streak the supervisor
    gives up and calls `on_give_up` (by default: this process shuts down and exits 1, so whatever
    runs it, systemd or Kubernetes, takes over).
    """

    def __init__(
        self,
        embedded: EmbeddedPostgres,
        *,
        attempts: int,
        max_backoff_s: float,
        on_give_up: Callable[[str], None] = terminate_this_process,
    ) -> None:
        self._embedded = embedded
        self._attempts = attempts
        self._max_backoff_s = max_backoff_s
        self._on_give_up = on_give_up
        self._stopping = threading.Event()
        self._wake_r, self._wake_w = os.pipe()
        self._thread: threading.Thread | None = None
        self._streak = 0
        self._last_restart = float("-inf")
        self.restarts = 0
        self.gave_up: str | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="postgres-supervisor", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop watching (before the postmaster is stopped on purpose). A restart under way finishes
        first; `EmbeddedPostgres.stop` waits for it as well."""
        self._stopping.set()
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")
        if self._thread is not None:
            self._thread.join(timeout_s)
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _run(self) -> None:
        while not self._stopping.is_set():
            pid = self._embedded.postmaster_pid
            if pid is None or not self._wait_for_exit(pid):
                return
            reason = exit_reason(pid)
            log.error(
                "embedded PostgreSQL stopped (postmaster pid %d, %s); restarting it; its log ends:\n%s",
                pid,
                reason,
                log_tail(self._embedded.data_dir) or "(empty)",
            )
            if not self._restart():
                return

    def _wait_for_exit(self, pid: int) -> bool:
        """Block until `pid` exits (True) or the supervisor is stopped (False)."""
        try:
            pidfd: int | None = os.pidfd_open(pid)
        except ProcessLookupError:
            return True
        except (AttributeError, OSError):
            pidfd = None  # no pidfd: poll
        try:
            while not self._stopping.is_set():
                watched = [self._wake_r] if pidfd is None else [self._wake_r, pidfd]
                ready, _, _ = select.select(watched, [], [], _POLL_S)
                if self._stopping.is_set():
                    return False
                if (pidfd is not None and pidfd in ready) or not process_alive(pid):
                    return True
            return False
        finally:
            if pidfd is not None:
                os.close(pidfd)

    def _restart(self) -> bool:
        """Restart with backoff; False when the supervisor gave up or was stopped."""
        if time.monotonic() - self._last_restart >= self._max_backoff_s:
            self._streak = 0  # it stayed up for a while: a new outage, not a crash loop
        while self._streak < self._attempts:
            delay = min(FIRST_BACKOFF_S * 2**self._streak, self._max_backoff_s)
            self._streak += 1
            if self._stopping.wait(delay):
                return False
            began = time.monotonic()
            try:
                pid = self._embedded.restart()
            except Exception as exc:  # any failure is one failed attempt; the log says why
                log.error(
                    "restarting the embedded PostgreSQL failed (attempt %d of %d): %s; its log ends:\n%s",
                    self._streak,
                    self._attempts,
                    exc,
                    log_tail(self._embedded.data_dir) or "(empty)",
                )
                continue
            self._last_restart = time.monotonic()
            self.restarts += 1
            log.warning(
                "embedded PostgreSQL restarted (postmaster pid %d) in %.1f s (attempt %d of %d)",
                pid,
                self._last_restart - began,
                self._streak,
                self._attempts,
            )
            return True
        self.gave_up = f"the embedded PostgreSQL could not be restarted ({self._attempts} attempts)"
        self._on_give_up(self.gave_up)
        return False
