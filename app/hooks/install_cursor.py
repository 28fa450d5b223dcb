"""Write Memoria's hook for Cursor into its `hooks.json`, and take it out again.

Cursor reads `~/.cursor/hooks.json` (user; run from `~/.cursor/`) and `<project>/.cursor/hooks.json`
(project, in a trusted workspace): `{"version": 1, "hooks": {<event>: [<hook>, ...]}}`, each hook
flat (`{"command": ..., "timeout": <seconds>}`). It hands a command hook its common fields
(`conversation_id`, `workspace_roots`, `hook_event_name`, ..., no `cwd`) plus the event's own, and
reads the answer's fields in snake_case (`memoria_hook_client.cursor` reads the events). Of its
events only one can add context to the model, and that is the one Memoria installs:

- sessionStart -> `session-start`: `additional_context` joins the conversation's initial system
  context. Cursor runs it fire-and-forget (the agent loop does not wait for it), so a slow answer
  can miss the first request; the hook client's budget keeps it short.

Nothing else is installed, and why: beforeSubmitPrompt can only let a prompt through or block it
(`continue`, `user_message`), so there is no per-prompt recall (the MCP tools recall on demand); and
Cursor documents no format for the transcript its `transcript_path` names, so there is no capture.

`timeout` is in seconds (Cursor's per-hook option); Memoria writes Claude Code's command timeout.
Cursor also runs Claude Code's hooks from `~/.claude/settings.json` when its third-party hooks
setting is on: docs/agents/cursor.md says what that means for a machine with both installed.

Only Memoria's hook is touched (judged on the parsed command, as for Claude Code): a person's own
hooks keep their place and exact text, a second install changes nothing, and install then uninstall
gives the file back byte for byte. A file the install created is removed by the uninstall once it
holds nothing but the `version` it was given, with its `.cursor` folder when that is left empty.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from app.client.json_file import JsonFileError, read_object, render_edit, write_atomically
from app.hooks.agent_install import AgentConfigError, AgentInstaller, InstallReport, InstallRequest
from app.hooks.install import COMMAND_TIMEOUT_S, command_hook, is_memoria_command

Scope = Literal["user", "project"]

AGENT = "cursor"
SESSION_START = "sessionStart"
EVENTS = (SESSION_START,)
FOLDER = ".cursor"
FILE_NAME = "hooks.json"
FORMAT_VERSION = 1
NOT_INSTALLED_NOTE = (
    "Cursor: no per-prompt recall (beforeSubmitPrompt can only allow or block a prompt) and no capture "
    "(Cursor documents no transcript format); `memoria mcp install --agent cursor` gives its agent the "
    "memory tools."
)
TRUST_NOTE = "Cursor runs a project's .cursor/hooks.json only in a workspace it trusts."


class CursorConfigError(AgentConfigError):
    """The hooks file cannot be read or cannot take the change; it was left as it is."""


def hooks_path(scope: Scope, project_dir: Path, config_dir: Path | None = None) -> Path:
    """Cursor's hooks file: in `config_dir` when given, else the scope's `.cursor` folder."""
    if config_dir is not None:
        return config_dir / FILE_NAME
    base = project_dir if scope == "project" else Path.home()
    return base / FOLDER / FILE_NAME


def cursor_hook(url: str, namespace: str | None, sub: str) -> dict[str, Any]:
    """The command hook for subcommand `sub`, naming the agent; its timeout in seconds."""
    return {
        "command": command_hook(url, namespace, sub, agent=AGENT)["command"],
        "timeout": COMMAND_TIMEOUT_S,
    }


def planned_hooks(
    url: str, namespace: str | None, *, session_start: bool = True
) -> dict[str, dict[str, Any]]:
    """Memoria's hook for each Cursor event to install (`namespace` None: per event, from its workspace)."""
    return {SESSION_START: cursor_hook(url, namespace, "session-start")} if session_start else {}


def is_memoria_entry(entry: Any) -> bool:
    return (
        isinstance(entry, dict)
        and entry.get("type", "command") == "command"
        and is_memoria_command(str(entry.get("command", "")))
    )


def installed(config: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Memoria's hooks in a hooks file's object, per Cursor event (events without any left out)."""
    hooks = config.get("hooks")
    if not isinstance(hooks, dict):
        return {}
    found = {
        event: [entry for entry in hooks.get(event) or [] if is_memoria_entry(entry)]
        for event in EVENTS
        if isinstance(hooks.get(event), list)
    }
    return {event: entries for event, entries in found.items() if entries}


def _events(config: dict[str, Any]) -> dict[str, Any]:
    hooks = config.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise CursorConfigError('"hooks" is not an object')
    for event in EVENTS:
        if hooks.get(event) is not None and not isinstance(hooks[event], list):
            raise CursorConfigError(f'"hooks.{event}" is not a list')
    return hooks


def with_memoria(config: dict[str, Any], plan: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """`config` with exactly `plan`'s hooks as Memoria's: an event already holding just the planned
    hook is left as it is, others lose ours and get the planned one at their end. A new file gets
    the `version` Cursor's format names; an existing one keeps what it has."""
    result = copy.deepcopy(config)
    if not result:
        result["version"] = FORMAT_VERSION
    hooks = _events(result)
    for event in EVENTS:
        wanted = plan.get(event)
        entries = hooks.get(event) or []
        ours = [entry for entry in entries if is_memoria_entry(entry)]
        if (wanted is not None and ours == [wanted]) or (wanted is None and not ours):
            continue
        kept = [entry for entry in entries if not is_memoria_entry(entry)]
        if wanted is not None:
            hooks[event] = [*kept, wanted]
        elif kept:
            hooks[event] = kept
        else:
            del hooks[event]
    return result


def without_memoria(config: dict[str, Any]) -> dict[str, Any]:
    """`config` minus Memoria's hooks; an event goes only when we emptied it."""
    return with_memoria(config, {}) if installed(config) else copy.deepcopy(config)


def install(path: Path, plan: Mapping[str, dict[str, Any]]) -> bool:
    """True when the file changed (False: these exact hooks were already installed)."""
    current, original = read_object(path)
    updated = with_memoria(current, plan)
    if updated == current:
        return False
    write_atomically(path, render_edit(updated, original))
    return True


def uninstall(path: Path) -> bool:
    """True when a Memoria hook was removed; a file left holding only the `version` and no hook is
    removed, and its `.cursor` folder when nothing else is in it."""
    if not path.exists():
        return False
    current, original = read_object(path)
    if not installed(current):
        return False
    updated = without_memoria(current)
    if updated not in ({"version": FORMAT_VERSION, "hooks": {}}, {"hooks": {}}):
        write_atomically(path, render_edit(updated, original))
        return True
    path.unlink()
    if path.parent.name == FOLDER:
        with contextlib.suppress(OSError):  # not empty: Cursor's own files, the person's scripts
            path.parent.rmdir()
    return True


def install_hooks(request: InstallRequest) -> InstallReport:
    """`memoria hook install --agent cursor`."""
    path = hooks_path(request.scope, request.project_dir, request.config_dir)
    plan = planned_hooks(request.url, request.namespace, session_start=request.session_start)
    try:
        changed = install(path, plan)
    except JsonFileError as exc:
        raise CursorConfigError(str(exc)) from exc
    notes = [NOT_INSTALLED_NOTE, *([TRUST_NOTE] if request.scope == "project" else [])]
    return InstallReport(changed=[path] if changed else [], events=list(plan), notes=notes)


def uninstall_hooks(request: InstallRequest) -> InstallReport:
    """`memoria hook uninstall --agent cursor`."""
    path = hooks_path(request.scope, request.project_dir, request.config_dir)
    try:
        removed = uninstall(path)
    except JsonFileError as exc:
        raise CursorConfigError(str(exc)) from exc
    return InstallReport(changed=[path] if removed else [])


def installed_events(config_dir: Path | None) -> tuple[Path, list[str]]:
    """For `memoria status`: the user's hooks file (or the one in `config_dir`) and the Cursor events
    Memoria's hooks are installed on there."""
    path = hooks_path("user", Path.cwd(), config_dir)
    try:
        config, _ = read_object(path)
    except JsonFileError as exc:
        raise CursorConfigError(str(exc)) from exc
    return path, list(installed(config))


CURSOR = AgentInstaller(
    name=AGENT,
    label="Cursor",
    executable="cursor-agent",
    other_executables=("cursor",),
    install=install_hooks,
    uninstall=uninstall_hooks,
    installed=installed_events,
)
