"""Memoria's hooks in a `settings.json` of Gemini CLI's shape, for any host that reads one.

Gemini CLI (`app.hooks.install_gemini`) and Qwen Code (`app.hooks.install_qwen`, a fork of it) read
hooks from the `hooks` object of `~/<folder>/settings.json` (user) and `<project>/<folder>/settings.json`
(project), in Claude Code's shape (per event a list of groups, each with its `hooks`), every hook
with a `name` and a `timeout` in milliseconds. They differ in the folder, the event names and what
to tell the person after an install: a `SettingsJsonHost` holds those, and everything else is here
once.

The merge is `app.hooks.install`'s on the host's events: only Memoria's hooks are touched (the
parsed command runs our hook client), everything else keeps its place and its exact text, a second
install changes nothing, and install then uninstall gives the file back byte for byte; a file left
holding `{}` is removed, with the host's folder when that is left empty. Both hosts also accept
comments in settings.json; a file with comments is not JSON to this installer, which refuses it
and leaves it as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from app.client.json_file import JsonFileError, read_object
from app.hooks import install as hooks_install
from app.hooks.agent_install import AgentConfigError, AgentInstaller, InstallReport, InstallRequest
from app.hooks.install import command_hook

Scope = Literal["user", "project"]

#: The `name` of each of Memoria's hooks (`/hooks disable <name>` takes it), per subcommand.
NAMES = {
    "session-start": "memoria-session-start",
    "user-prompt-submit": "memoria-recall",
    "capture": "memoria-capture",
}


@dataclass(frozen=True, slots=True)
class SettingsJsonHost:
    """One host reading hooks from a Gemini-shaped `settings.json`: where, on which events, how long."""

    agent: str
    """The host's name (`app.hooks.hosts`), which the hook command passes as `--agent`."""
    label: str
    executable: str
    folder: str
    """The settings file's folder, in HOME (user) or the project (`.gemini`, `.qwen`)."""
    session_start: str
    prompt: str
    capture_events: tuple[str, ...]
    command_timeout_ms: int
    capture_timeout_ms: int
    error: type[AgentConfigError]
    notes: tuple[str, ...] = ()
    """Told after every install."""
    project_notes: tuple[str, ...] = ()
    """Told after a project install."""

    @property
    def events(self) -> tuple[str, ...]:
        return (self.session_start, self.prompt, *self.capture_events)

    def settings_path(self, scope: Scope, project_dir: Path) -> Path:
        base = Path.home() if scope == "user" else project_dir
        return base / self.folder / "settings.json"

    def request_path(self, request: InstallRequest) -> Path:
        """The settings file `request` names: `settings.json` in `--config-dir`, else the scope's."""
        if request.config_dir is not None:
            return request.config_dir / "settings.json"
        return self.settings_path(request.scope, request.project_dir)

    def hook(self, url: str, namespace: str | None, sub: str) -> dict[str, Any]:
        """The command hook for subcommand `sub`, as Claude Code's installer writes it, naming the
        agent so the client reads this host's payload; its timeout in milliseconds."""
        command = command_hook(url, namespace, sub, agent=self.agent)["command"]
        timeout = self.capture_timeout_ms if sub == "capture" else self.command_timeout_ms
        return {"name": NAMES[sub], "type": "command", "command": command, "timeout": timeout}

    def planned_hooks(
        self,
        url: str,
        namespace: str | None,
        *,
        session_start: bool = True,
        recall: bool = True,
        capture: bool = True,
    ) -> dict[str, dict[str, Any]]:
        """Memoria's hook for each event to install (`namespace` None: per event, from its cwd)."""
        plan: dict[str, dict[str, Any]] = {}
        if session_start:
            plan[self.session_start] = self.hook(url, namespace, "session-start")
        if recall:
            plan[self.prompt] = self.hook(url, namespace, "user-prompt-submit")
        if capture:
            for event in self.capture_events:
                plan[event] = self.hook(url, namespace, "capture")
        return plan

    def installed(self, settings: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
        """Memoria's hooks in `settings`, per event (events without any left out)."""
        return hooks_install.installed(settings, self.events)

    def install(self, path: Path, plan: Mapping[str, dict[str, Any]]) -> bool:
        """True when the file changed (False: these exact hooks were already installed)."""
        return hooks_install.install(path, plan, self.events)

    def uninstall(self, path: Path) -> bool:
        """True when a Memoria hook was removed; a file left holding `{}` goes, with the host's
        folder when nothing else is in it (what an install into a fresh project created)."""
        return hooks_install.uninstall(path, self.events, self.folder)

    def read_installed(self, path: Path) -> dict[str, list[dict[str, Any]]] | None:
        """Memoria's hooks in the settings file at `path` per event; None when it cannot be read."""
        try:
            settings, _ = read_object(path)
        except JsonFileError:
            return None
        return self.installed(settings)

    def install_hooks(self, request: InstallRequest) -> InstallReport:
        """`memoria hook install --agent <agent>`."""
        path = self.request_path(request)
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
        path = self.request_path(request)
        try:
            removed = self.uninstall(path)
        except JsonFileError as exc:
            raise self.error(str(exc)) from exc
        return InstallReport(changed=[path] if removed else [])

    def installed_events(self, config_dir: Path | None) -> tuple[Path, list[str]]:
        """For `memoria status`: the user's settings file (or `settings.json` in `config_dir`) and the
        events Memoria's hooks are installed on there."""
        user = self.settings_path("user", Path.cwd())
        path = config_dir / "settings.json" if config_dir is not None else user
        try:
            settings, _ = read_object(path)
        except JsonFileError as exc:
            raise self.error(str(exc)) from exc
        return path, list(self.installed(settings))

    def installer(self) -> AgentInstaller:
        """This host's entry in `app.hooks.installers`."""
        return AgentInstaller(
            name=self.agent,
            label=self.label,
            executable=self.executable,
            install=self.install_hooks,
            uninstall=self.uninstall_hooks,
            installed=self.installed_events,
        )
