"""Merge Memoria's Qwen Code hooks into a Qwen Code settings file, and take them out again.

Qwen Code (a fork of Gemini CLI) reads hooks from the `hooks` object of `~/.qwen/settings.json`
(user) and `<project>/.qwen/settings.json` (project), in Claude Code's shape and under Claude Code's
event names, and hands a command hook Claude Code's payload (`session_id`, `transcript_path`, `cwd`,
`hook_event_name`, `prompt`) and reads Claude Code's answer (`hookSpecificOutput.additionalContext`).
Memoria installs:

- SessionStart -> `session-start`: its `additionalContext` goes into the session's first turn;
- UserPromptSubmit -> `user-prompt-submit`: recall for each prompt, its `additionalContext` added
  to the prompt's turn.

No capture hook yet: the hook client has no reader for Qwen Code's session file
(`~/.qwen/projects/<cwd>/chats/<session>.jsonl`), so `--no-capture` or not, none is written.

Timeouts: Qwen Code 0.24.4 reads a command hook's `timeout` in seconds, except that a value of
1000 or more keeps its older meaning, milliseconds; earlier releases read milliseconds only. Memoria
writes milliseconds of 1000 or more, which every release reads the same way.

The merge is `app.hooks.install`'s, on Qwen Code's events: only Memoria's hooks are touched (the
parsed command runs our hook client), everything else keeps its place and its exact text, a second
install changes nothing, and install then uninstall gives the file back byte for byte; a file left
holding `{}` is removed, with its `.qwen` directory when that is left empty.
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

AGENT = "qwen"
SESSION_START = "SessionStart"
PROMPT = "UserPromptSubmit"
EVENTS = (SESSION_START, PROMPT)
#: Milliseconds Qwen Code waits: the client's own budget (1.5 s) plus slack for a cold start.
COMMAND_TIMEOUT_MS = 3000
NAMES = {"session-start": "memoria-session-start", "user-prompt-submit": "memoria-recall"}
CAPTURE_NOTE = "Qwen Code: no capture hook yet (its session files are not read); recall only."


class QwenConfigError(AgentConfigError):
    """The settings file cannot be read or is not a JSON object; it was left as it is."""


def settings_path(scope: Scope, project_dir: Path) -> Path:
    if scope == "user":
        return Path.home() / ".qwen" / "settings.json"
    return project_dir / ".qwen" / "settings.json"


def request_path(request: InstallRequest) -> Path:
    """The settings file `request` names: `settings.json` in `--config-dir`, else the scope's."""
    if request.config_dir is not None:
        return request.config_dir / "settings.json"
    return settings_path(request.scope, request.project_dir)


def qwen_hook(url: str, namespace: str | None, sub: str) -> dict[str, Any]:
    """The command hook for subcommand `sub`, naming the agent; its timeout in milliseconds."""
    command = command_hook(url, namespace, sub, agent=AGENT)["command"]
    return {"name": NAMES[sub], "type": "command", "command": command, "timeout": COMMAND_TIMEOUT_MS}


def planned_hooks(
    url: str, namespace: str | None, *, session_start: bool = True, recall: bool = True
) -> dict[str, dict[str, Any]]:
    """Memoria's hook for each Qwen Code event to install (`namespace` None: per event, from its cwd)."""
    plan: dict[str, dict[str, Any]] = {}
    if session_start:
        plan[SESSION_START] = qwen_hook(url, namespace, "session-start")
    if recall:
        plan[PROMPT] = qwen_hook(url, namespace, "user-prompt-submit")
    return plan


def installed(settings: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Memoria's hooks in `settings`, per Qwen Code event (events without any left out)."""
    return hooks_install.installed(settings, EVENTS)


def install(path: Path, plan: Mapping[str, dict[str, Any]]) -> bool:
    """True when the file changed (False: these exact hooks were already installed)."""
    return hooks_install.install(path, plan, EVENTS)


def uninstall(path: Path) -> bool:
    """True when a Memoria hook was removed; a file left holding `{}` goes, with its `.qwen`
    directory when nothing else is in it."""
    return hooks_install.uninstall(path, EVENTS, ".qwen")


def install_hooks(request: InstallRequest) -> InstallReport:
    """`memoria hook install --agent qwen`."""
    path = request_path(request)
    plan = planned_hooks(
        request.url, request.namespace, session_start=request.session_start, recall=request.recall
    )
    try:
        changed = install(path, plan)
    except JsonFileError as exc:
        raise QwenConfigError(str(exc)) from exc
    return InstallReport(changed=[path] if changed else [], events=list(plan), notes=[CAPTURE_NOTE])


def uninstall_hooks(request: InstallRequest) -> InstallReport:
    """`memoria hook uninstall --agent qwen`."""
    path = request_path(request)
    try:
        removed = uninstall(path)
    except JsonFileError as exc:
        raise QwenConfigError(str(exc)) from exc
    return InstallReport(changed=[path] if removed else [])


def installed_events(config_dir: Path | None) -> tuple[Path, list[str]]:
    """For `memoria status`: the user's settings file (or `settings.json` in `config_dir`) and the
    Qwen Code events Memoria's hooks are installed on there."""
    path = config_dir / "settings.json" if config_dir is not None else settings_path("user", Path.cwd())
    try:
        settings, _ = read_object(path)
    except JsonFileError as exc:
        raise QwenConfigError(str(exc)) from exc
    return path, list(installed(settings))


QWEN = AgentInstaller(
    name=AGENT,
    label="Qwen Code",
    executable="qwen",
    install=install_hooks,
    uninstall=uninstall_hooks,
    installed=installed_events,
)
