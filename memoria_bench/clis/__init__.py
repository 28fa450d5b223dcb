"""The real coding-agent CLIs run headless against fake model APIs on 127.0.0.1.

Shared by the real-CLI tests (tests/test_codex_cli.py, tests/test_gemini_cli_*.py, ...) and
`memoria bench session`, which times whole sessions of the same CLIs with hooks and without: one
place says how each CLI is found (its `$…_BIN`, else its `.ci/<cli>.sh --install-only`), which HOME
settings and environment point it at its fake, and how it is given one prompt. The fakes
(`model_api` and one module per provider's wire format) record every request and answer in that
provider's streaming shape; nothing leaves the machine.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

INSTALL_TIMEOUT_S = 600


class CliMissing(RuntimeError):
    """The CLI is neither at its `$…_BIN` nor installable by its `.ci` script; the message says why."""


def installed_binary(env_var: str, install_script: Path, label: str) -> str:
    """`$env_var` when set, else the binary `install_script --install-only` installs (once, into a
    local cache folder) and prints last."""
    configured = os.environ.get(env_var)
    if configured:
        return configured
    done = subprocess.run(
        ["bash", str(install_script), "--install-only"],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        raise CliMissing(f"installing {label} failed (set ${env_var}):\n{done.stdout}\n{done.stderr}")
    return done.stdout.strip().splitlines()[-1]
