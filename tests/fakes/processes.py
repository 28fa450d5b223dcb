"""Stopping the `memoria serve` processes tests start, the way an orchestrator would."""

from __future__ import annotations

import signal
import subprocess


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
