"""The command hook's log: why it stayed silent, one line per failure, never growing unbounded.

The hook fails open (exit 0, no output), and a hook that silently does nothing is otherwise
impossible to debug; so each reason goes to a small file instead. Standard library only.
"""

from __future__ import annotations

import os
import time

LOG_CAP_BYTES = 64 * 1024
MAX_LINE_CHARS = 500


def write_log(path: str | os.PathLike[str], reason: str) -> None:
    """Append one line; past the cap the old log moves to `<name>.1`, so it never grows unbounded."""
    path = os.fspath(path)
    try:
        os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
        try:
            if os.stat(path).st_size > LOG_CAP_BYTES:
                os.replace(path, path + ".1")
        except FileNotFoundError:
            pass
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"{stamp} {reason[:MAX_LINE_CHARS]}\n")
    except OSError:
        pass  # a log we cannot write must not turn a quiet failure into a loud one
