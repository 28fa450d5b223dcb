"""Stopping the `memoria serve` processes tests start, the way an orchestrator would; and hanging a
PostgreSQL server (the embedded one, or a replica) the way a frozen machine does."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path


def stop_gracefully(proc: subprocess.Popen[str] | subprocess.Popen[bytes], grace_s: float = 30) -> None:
    """SIGTERM, then SIGKILL when the process has not exited within `grace_s`."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def postgres_processes(pgdata: Path) -> list[int]:
    """The postmaster (first line of postmaster.pid), then its children (backends, checkpointer, …)."""
    postmaster = int((pgdata / "postmaster.pid").read_text().splitlines()[0])
    children = Path(f"/proc/{postmaster}/task/{postmaster}/children").read_text().split()
    return [postmaster, *map(int, children)]


@contextmanager
def hung(pgdata: Path) -> Iterator[None]:
    """The whole server stopped (SIGSTOP) while the block runs: its port still accepts connections
    (the kernel completes the handshake) and nothing answers. The postmaster first, so it starts no
    new process meanwhile; resumed (SIGCONT) whatever the block does, so no stopped server outlives a
    failed test."""
    pids = postgres_processes(pgdata)
    try:
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        yield
    finally:
        for pid in reversed(pids):
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
