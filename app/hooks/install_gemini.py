"""Merge Memoria's Gemini CLI hooks into a Gemini CLI settings file, and take them out again.

Gemini CLI reads hooks from the `hooks` object of `~/.gemini/settings.json` (user) and
`<project>/.gemini/settings.json` (project; run only in a trusted folder, and announced once with a
warning the first time Gemini CLI sees them), in Claude Code's shape: per event a list of groups,
each with its `hooks`. Its events have names of their own; Memoria installs:

- SessionStart -> `session-start`: its `additionalContext` is prefixed to the first prompt
  (`gemini -p`) or put first in the history (interactive);
- BeforeAgent -> `user-prompt-submit`: recall for each prompt, its `additionalContext` added to
  the prompt's turn;
- AfterAgent (the turn's final answer), PreCompress and SessionEnd -> `capture`, which reads the
  session file (`transcript_path`).

Timeouts are in milliseconds (Claude Code's are seconds). Every hook has a `name`, which
`/hooks disable <name>` takes. The hooks run on this machine and work the namespace out per event
from the session's directory, so a user install serves every repository.

The merge is `app.hooks.install`'s (Gemini CLI's settings have Claude Code's shape), on Gemini
CLI's events: only Memoria's hooks are touched (the parsed command runs our hook client),
everything else keeps its place and its exact text, a second install changes nothing, and
install then uninstall gives the file back byte for byte; a file left holding `{}` is removed,
with its `.gemini` directory when that is left empty. Gemini CLI also accepts comments in
settings.json; a file with comments is not JSON to this installer, which refuses it and leaves it
as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from app.client.json_file import JsonFileError, read_object
from app.hooks import install as hooks_install
from app.hooks.agent_install import AgentConfigError, AgentInstaller, InstallReport, InstallRequest
from app.hooks.install import command_hook

Scope = Literal["user", "project"]

AGENT = "gemini"
SESSION_START = "SessionStart"
PROMPT = "BeforeAgent"
CAPTURE_EVENTS = ("AfterAgent", "PreCompress", "SessionEnd")
EVENTS = (SESSION_START, PROMPT, *CAPTURE_EVENTS)
#: Milliseconds Gemini CLI waits: the client's own budget (1.5 s) plus slack for a cold start.
COMMAND_TIMEOUT_MS = 3000
#: The capture hook spools and hands the sending to a detached process; this bounds a slow disk.
CAPTURE_TIMEOUT_MS = 10000
NAMES = {
    "session-start": "memoria-session-start",
    "user-prompt-submit": "memoria-recall",
    "capture": "memoria-capture",
}

SettingsFileError = JsonFileError
#: Told after an install: what decides whether Gemini CLI runs the hooks and how they get the key.
KEY_NOTE = (
    "Gemini CLI hands hooks an environment without variables named like *KEY* when it runs in "
    "GitHub Actions or with security.environmentVariableRedaction on: there the hooks read the key "
    "file (`memoria login`), not MEMORIA_CLIENT__API_KEY."
)
PROJECT_NOTE = (
    "Gemini CLI runs a project's hooks only in a trusted folder, and warns once the first time it sees them."
)


class GeminiConfigError(AgentConfigError):
    """The settings file cannot be read or is not a JSON object; it was left as it is."""


def settings_path(scope: Scope, project_dir: Path) -> Path:
    if scope == "user":
        return Path.home() / ".gemini" / "settings.json"
    return project_dir / ".gemini" / "settings.json"


def request_path(request: InstallRequest) -> Path:
    """The settings file `request` names: `settings.json` in `--config-dir`, else the scope's."""
    if request.config_dir is not None:
        return request.config_dir / "settings.json"
    return settings_path(request.scope, request.project_dir)


def gemini_hook(url: str, namespace: str | None, sub: str) -> dict[str, Any]:
    """The command hook for subcommand `sub`, as Claude Code's installer writes it, naming the agent
    so the client reads Gemini CLI's payload; its timeout in milliseconds."""
    command = command_hook(url, namespace, sub, agent=AGENT)["command"]
    timeout = CAPTURE_TIMEOUT_MS if sub == "capture" else COMMAND_TIMEOUT_MS
    return {"name": NAMES[sub], "type": "command", "command": command, "timeout": timeout}


def planned_hooks(
    url: str,
    namespace: str | None,
    *,
    session_start: bool = True,
    recall: bool = True,
    capture: bool = True,
) -> dict[str, dict[str, Any]]:
    """Memoria's hook for each Gemini CLI event to install (`namespace` None: per event, from its cwd)."""
    plan: dict[str, dict[str, Any]] = {}
    if session_start:
        plan[SESSION_START] = gemini_hook(url, namespace, "session-start")
    if recall:
        plan[PROMPT] = gemini_hook(url, namespace, "user-prompt-submit")
    if capture:
        for event in CAPTURE_EVENTS:
            plan[event] = gemini_hook(url, namespace, "capture")
    return plan


def installed(settings: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Memoria's hooks in `settings`, per Gemini CLI event (events without any left out)."""
    return hooks_install.installed(settings, EVENTS)


def install(path: Path, plan: Mapping[str, dict[str, Any]]) -> bool:
    """True when the file changed (False: these exact hooks were already installed)."""
    return hooks_install.install(path, plan, EVENTS)


def uninstall(path: Path) -> bool:
    """True when a Memoria hook was removed; a file left holding `{}` goes, with its `.gemini`
    directory when nothing else is in it (what an install into a fresh project created)."""
    return hooks_install.uninstall(path, EVENTS, ".gemini")


def read_installed(path: Path) -> dict[str, list[dict[str, Any]]] | None:
    """Memoria's hooks in the settings file at `path` per event; None when it cannot be read."""
    try:
        settings, _ = read_object(path)
    except JsonFileError:
        return None
    return installed(settings)


def install_hooks(request: InstallRequest) -> InstallReport:
    """`memoria hook install --agent gemini`."""
    path = request_path(request)
    plan = planned_hooks(
        request.url,
        request.namespace,
        session_start=request.session_start,
        recall=request.recall,
        capture=request.capture,
    )
    try:
        changed = install(path, plan)
    except JsonFileError as exc:
        raise GeminiConfigError(str(exc)) from exc
    notes = [KEY_NOTE] + ([PROJECT_NOTE] if request.scope == "project" else [])
    return InstallReport(changed=[path] if changed else [], events=list(plan), notes=notes)


def uninstall_hooks(request: InstallRequest) -> InstallReport:
    """`memoria hook uninstall --agent gemini`."""
    path = request_path(request)
    try:
        removed = uninstall(path)
    except JsonFileError as exc:
        raise GeminiConfigError(str(exc)) from exc
    return InstallReport(changed=[path] if removed else [])


def installed_events(config_dir: Path | None) -> tuple[Path, list[str]]:
    """For `memoria status`: the user's settings file (or `settings.json` in `config_dir`) and the
    Gemini CLI events Memoria's hooks are installed on there."""
    path = config_dir / "settings.json" if config_dir is not None else settings_path("user", Path.cwd())
    try:
        settings, _ = read_object(path)
    except JsonFileError as exc:
        raise GeminiConfigError(str(exc)) from exc
    return path, list(installed(settings))


GEMINI = AgentInstaller(
    name=AGENT,
    label="Gemini CLI",
    executable="gemini",
    install=install_hooks,
    uninstall=uninstall_hooks,
    installed=installed_events,
)
