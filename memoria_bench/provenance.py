"""Where a benchmark report comes from: the command, the commit, the date and the machine it ran on.

A figure means little without these: the same statement is twice as slow on a loaded laptop as on an
idle server, and a report two commits old may measure code that is gone. So every `--json` report
carries a `provenance` section, and `memoria bench report` renders it at the top of each page.
The load average is read before the bench starts and again when it ends: a run whose load rose
was sharing the machine.
"""

from __future__ import annotations

import os
import platform
import shlex
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import click

from memoria_bench.serve import REPO_ROOT

#: The key of the provenance section in every report.
PROVENANCE = "provenance"
#: Parameters whose value never goes into a report (reports end up in docs/): shown as `REDACTED`.
SECRET_PARAMS = frozenset({"key", "api_key", "password", "token"})


@dataclass(frozen=True, slots=True)
class Start:
    """What is read when a bench starts (the rest is read when it ends)."""

    at: datetime = field(default_factory=lambda: datetime.now(UTC))
    load: tuple[float, float, float] = field(default_factory=os.getloadavg)


def command_line(ctx: click.Context, prefix: Sequence[str]) -> str:
    """`prefix` (e.g. `memoria bench latency`) and every parameter given to the command `ctx` runs
    (not left at its default), as a shell would take it; an API key's value is left out."""
    words = list(prefix)
    for param in ctx.command.params:
        name = param.name
        if name is None or ctx.get_parameter_source(name) in (None, click.core.ParameterSource.DEFAULT):
            continue
        value = ctx.params.get(name)
        if isinstance(param, click.Option):
            if param.is_flag:
                given = param.opts if value or not param.secondary_opts else param.secondary_opts
                words.append(max(given, key=len))
                continue
            words += [max(param.opts, key=len), "REDACTED" if name in SECRET_PARAMS else str(value)]
        elif value is not None:
            words += [str(item) for item in (value if isinstance(value, tuple) else (value,))]
    return shlex.join(words)


def git_commit() -> str | None:
    """The checkout's commit, `+dirty` when files differ from it; None outside a git checkout."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head}+dirty" if dirty else head


def memory_gib() -> float | None:
    """The machine's physical memory in GiB (None where the platform does not say)."""
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (AttributeError, ValueError, OSError):
        return None


def provenance(bench: str, command: str, start: Start, label: str | None = None) -> dict[str, Any]:
    """The provenance section of a report of bench `bench`, run as `command` from `start` until now."""
    return {
        "bench": bench,
        "label": label,
        "command": command,
        "commit": git_commit(),
        "started_utc": start.at.isoformat(timespec="seconds"),
        "finished_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpus": os.cpu_count(),
            "memory_gib": memory_gib(),
            "load_before": [round(x, 2) for x in start.load],
            "load_after": [round(x, 2) for x in os.getloadavg()],
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
    }
