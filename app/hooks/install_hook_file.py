"""What `memoria hook install/uninstall --agent <host>` and `memoria status` do for a host whose hooks
live in one JSON file that Memoria edits in place.

Two kinds of file share this: a Gemini-shaped `settings.json` (`app.hooks.install_settings_json`:
Gemini CLI, Qwen Code) and a flat hooks file (`app.hooks.install_flat_hooks`: Copilot CLI, Cursor).
Each says where its file is and how Memoria's hooks go in and come out; this is the rest, once: the
plan an install request asks for written to the file the request names, a file that cannot be read
reported as the host's own error (`AgentConfigError`, the file left as it is), what to tell the person
after an install, and the host's entry in `app.hooks.installers`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from app.client.json_file import JsonFileError, read_object
from app.hooks.agent_install import AgentConfigError, AgentInstaller, InstallReport, InstallRequest

Scope = Literal["user", "project"]


@dataclass(frozen=True, slots=True, kw_only=True)
class HookFileHost(ABC):
    """One host reading Memoria's hooks from a JSON file: its names, its error, what to tell the person."""

    agent: str
    """The host's name (`app.hooks.hosts`), which the hook command passes as `--agent`."""
    label: str
    executable: str
    error: type[AgentConfigError]
    other_executables: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    """Told after every install."""
    project_notes: tuple[str, ...] = ()
    """Told after a project install."""

    @abstractmethod
    def path(self, scope: Scope, project_dir: Path, config_dir: Path | None = None) -> Path:
        """The hooks file: the one in `config_dir` (`--config-dir`) when given, else the scope's."""

    @property
    @abstractmethod
    def subcommands(self) -> Mapping[str, str]:
        """Per event Memoria installs on, in the order a session meets them: the hook client's
        subcommand it runs (`session-start`, `user-prompt-submit`, `capture`)."""

    @property
    def events(self) -> tuple[str, ...]:
        return tuple(self.subcommands)

    @abstractmethod
    def hook(self, url: str, namespace: str | None, sub: str) -> dict[str, Any]:
        """The host's hook running subcommand `sub` against `url` (`namespace` None: per event)."""

    def planned_hooks(
        self,
        url: str,
        namespace: str | None,
        *,
        session_start: bool = True,
        recall: bool = True,
        capture: bool = True,
    ) -> dict[str, dict[str, Any]]:
        """Memoria's hook for each event to install (`namespace` None: per event, from its folder)."""
        wanted = {"session-start": session_start, "user-prompt-submit": recall, "capture": capture}
        return {
            event: self.hook(url, namespace, sub) for event, sub in self.subcommands.items() if wanted[sub]
        }

    @abstractmethod
    def installed(self, config: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
        """Memoria's hooks in the file's object, per event (events without any left out)."""

    @abstractmethod
    def install(self, path: Path, plan: Mapping[str, dict[str, Any]]) -> bool:
        """True when the file changed (False: these exact hooks were already installed)."""

    @abstractmethod
    def uninstall(self, path: Path) -> bool:
        """True when a Memoria hook was removed."""

    def install_hooks(self, request: InstallRequest) -> InstallReport:
        """`memoria hook install --agent <agent>`."""
        path = self.path(request.scope, request.project_dir, request.config_dir)
        plan = self.planned_hooks(
            request.url,
            request.namespace,
            session_start=request.session_start,
            recall=request.recall,
            capture=request.capture,
        )
        try:
            changed = self.install(path, plan)
        except JsonFileError as exc:
            raise self.error(str(exc)) from exc
        notes = [*self.notes, *(self.project_notes if request.scope == "project" else ())]
        return InstallReport(changed=[path] if changed else [], events=list(plan), notes=notes)

    def uninstall_hooks(self, request: InstallRequest) -> InstallReport:
        """`memoria hook uninstall --agent <agent>`."""
        path = self.path(request.scope, request.project_dir, request.config_dir)
        try:
            removed = self.uninstall(path)
        except JsonFileError as exc:
            raise self.error(str(exc)) from exc
        return InstallReport(changed=[path] if removed else [])

    def installed_events(self, config_dir: Path | None) -> tuple[Path, list[str]]:
        """For `memoria status`: the user's hooks file (or the one in `config_dir`) and the events
        Memoria's hooks are installed on there."""
        path = self.path("user", Path.cwd(), config_dir)
        try:
            config, _ = read_object(path)
        except JsonFileError as exc:
            raise self.error(str(exc)) from exc
        return path, list(self.installed(config))

    def installer(self) -> AgentInstaller:
        """This host's entry in `app.hooks.installers`."""
        return AgentInstaller(
            name=self.agent,
            label=self.label,
            executable=self.executable,
            other_executables=self.other_executables,
            install=self.install_hooks,
            uninstall=self.uninstall_hooks,
            installed=self.installed_events,
        )
