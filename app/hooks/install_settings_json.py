"""Memoria's hooks in a `settings.json` of Gemini CLI's shape, for any host that reads one.

Gemini CLI (`app.hooks.install_gemini`) and Qwen Code (`app.hooks.install_qwen`, a fork of it) read
hooks from the `hooks` object of `~/<folder>/settings.json` (user) and `<project>/<folder>/settings.json`
(project), in Claude Code's shape (per event a list of groups, each with its `hooks`), every hook
with a `name` and a `timeout` in milliseconds. They differ in the folder, the event names and what
to tell the person after an install: a `SettingsJsonHost` holds those, and the editing is here once
(what an install request, an uninstall and `memoria status` do with it is
`app.hooks.install_hook_file`'s, shared with the flat hooks files of Copilot CLI and Cursor).

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
from typing import Any

from app.client.json_file import JsonFileError, read_object
from app.hooks import install as hooks_install
from app.hooks.install import command_hook
from app.hooks.install_hook_file import HookFileHost, Scope

#: The `name` of each of Memoria's hooks (`/hooks disable <name>` takes it), per subcommand.
NAMES = {
    "session-start": "memoria-session-start",
    "user-prompt-submit": "memoria-recall",
    "capture": "memoria-capture",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class SettingsJsonHost(HookFileHost):
    """One host reading hooks from a Gemini-shaped `settings.json`: where, on which events, how long."""

    folder: str
    """The settings file's folder, in HOME (user) or the project (`.gemini`, `.qwen`)."""
    session_start: str
    prompt: str
    capture_events: tuple[str, ...]
    command_timeout_ms: int
    capture_timeout_ms: int

    @property
    def subcommands(self) -> dict[str, str]:
        return {
            self.session_start: "session-start",
            self.prompt: "user-prompt-submit",
            **dict.fromkeys(self.capture_events, "capture"),
        }

    def settings_path(self, scope: Scope, project_dir: Path) -> Path:
        base = Path.home() if scope == "user" else project_dir
        return base / self.folder / "settings.json"

    def path(self, scope: Scope, project_dir: Path, config_dir: Path | None = None) -> Path:
        """`settings.json` in `config_dir` (`--config-dir`) when given, else the scope's."""
        if config_dir is not None:
            return config_dir / "settings.json"
        return self.settings_path(scope, project_dir)

    def hook(self, url: str, namespace: str | None, sub: str) -> dict[str, Any]:
        """The command hook for subcommand `sub`, as Claude Code's installer writes it, naming the
        agent so the client reads this host's payload; its timeout in milliseconds."""
        command = command_hook(url, namespace, sub, agent=self.agent)["command"]
        timeout = self.capture_timeout_ms if sub == "capture" else self.command_timeout_ms
        return {"name": NAMES[sub], "type": "command", "command": command, "timeout": timeout}

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
