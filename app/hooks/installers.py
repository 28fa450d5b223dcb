"""`memoria hook install --agent <name>`: one config writer per coding agent.

Claude Code's writer is `app.hooks.install` (its settings files, scopes and http mode are its own,
and `memoria hook install` without `--agent` is Claude Code's, as before). Every other agent has a
small module of its own (`app.hooks.install_codex`, ...) offering an `AgentInstaller`
(`app.hooks.agent_install`), registered in `INSTALLERS` below.

`--agent all` installs for every agent whose command (any of them, for an agent with more than one)
is on PATH (`detected`).
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping

from app.hooks.agent_install import AgentInstaller
from app.hooks.install_codex import CODEX
from app.hooks.install_copilot import COPILOT
from app.hooks.install_cursor import CURSOR
from app.hooks.install_gemini import GEMINI
from app.hooks.install_opencode import OPENCODE
from app.hooks.install_qwen import QWEN

CLAUDE_CODE = "claude-code"
"""The agent `memoria hook install` serves without `--agent` (written by `app.hooks.install`)."""
ALL = "all"

INSTALLERS: dict[str, AgentInstaller] = {
    installer.name: installer for installer in (CODEX, GEMINI, QWEN, OPENCODE, COPILOT, CURSOR)
}
"""Every agent but Claude Code, by name (the names of `app.hooks.hosts.HOSTS`)."""
CLAUDE_EXECUTABLE = "claude"
AGENT_CHOICES = (CLAUDE_CODE, *INSTALLERS, ALL)


def detected(env: Mapping[str, str] | None = None) -> list[str]:
    """The agents whose command is on PATH (Claude Code first): what `--agent all` installs for."""
    path = None if env is None else env.get("PATH", "")
    found = [CLAUDE_CODE] if shutil.which(CLAUDE_EXECUTABLE, path=path) else []
    return found + [
        name
        for name, each in INSTALLERS.items()
        if any(shutil.which(command, path=path) for command in each.executables)
    ]
