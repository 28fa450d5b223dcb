"""What an agent's config writer takes and gives back (`app.hooks.installers` lists the writers).

Each writer keeps the promises of the Claude Code one (`app.hooks.install`): idempotent (a second
install changes nothing), surgical (a person's own entries keep their place and text), reversible
(uninstall after install gives every file it touched back byte for byte, and removes files and
folders the install created), and never a key in a config file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

AgentScope = Literal["user", "project"]


class AgentConfigError(Exception):
    """An agent's config file cannot be read, or cannot take the change; it was left as it is."""


@dataclass(frozen=True, slots=True)
class InstallRequest:
    """What to install, and where, for one agent."""

    scope: AgentScope
    project_dir: Path
    url: str
    namespace: str | None = None
    session_start: bool = True
    recall: bool = True
    capture: bool = True
    config_dir: Path | None = None
    """The agent's config folder to edit instead of the scope's (tests; `--config-dir`)."""


@dataclass(frozen=True, slots=True)
class InstallReport:
    """What an install or uninstall did: the files it changed and what to tell the person."""

    changed: list[Path] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    """The agent's events that now run a Memoria hook (install only)."""
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class AgentInstaller:
    """One agent's config writer."""

    name: str
    label: str
    executable: str
    """The agent's command, looked for on PATH by `--agent all`."""
    install: Callable[[InstallRequest], InstallReport]
    uninstall: Callable[[InstallRequest], InstallReport]
    installed: Callable[[Path | None], tuple[Path, list[str]]] | None = None
    """(the config file, the events Memoria's hooks are installed on there) for `memoria status`;
    the argument is the config folder to look in instead of the agent's own. AgentConfigError
    when the file cannot be read."""
    other_executables: tuple[str, ...] = ()
    """Other commands that mean the agent is installed (Cursor: its CLI, `cursor-agent`, or the editor's
    `cursor`)."""

    @property
    def executables(self) -> tuple[str, ...]:
        """Every command `--agent all` looks for, the main one first."""
        return (self.executable, *self.other_executables)
