"""Write Memoria's hooks for GitHub Copilot CLI into a hook file of its own, and take them out again.

Copilot CLI loads every `*.json` in `~/.copilot/hooks/` (user; `$COPILOT_HOME/hooks/` when that is
set) and in a repository's `.github/hooks/`: `{"version": 1, "hooks": {<event>: [<hook>, ...]}}`,
each hook flat (`{"type": "command", "bash": ..., "timeoutSec": ...}`, no Claude-style groups),
under camelCase event names. It hands a command hook camelCase JSON on stdin (`sessionId`,
`timestamp`, `cwd`, plus `prompt` for userPromptSubmitted, `source` and `initialPrompt` for
sessionStart; no event name) and reads `additionalContext` at the top of the object it prints.
Memoria installs, in `memoria.json` there:

- sessionStart -> `session-start`: its context becomes a user message ahead of the first prompt;
- userPromptSubmitted -> `user-prompt-submit`: recall for each prompt, added after the prompt;
- agentStop (the end of each turn, also in `copilot -p`) -> `capture`, which reads the session file
  agentStop names (`transcriptPath`, `~/.copilot/session-state/<session>/events.jsonl`;
  `memoria_hook_client.copilot_transcript`). sessionEnd gets none: it names no session file.

`timeoutSec` is in seconds (Copilot CLI's default is 30); Memoria writes Claude Code's timeouts
(the command's, the capture hook's), which leave the client's own budget room for a cold start.

Only Memoria's hooks are touched (judged on the parsed `bash` command, as for Claude Code): a
person's own hooks in the same file keep their place and exact text, a second install changes
nothing, and install then uninstall gives the file back byte for byte. A file left holding no hook
but the `version` an install wrote is removed, with its `hooks` folder (and the `.copilot` or
`.github` folder holding it) when that is left empty.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from app.client.copilot_home import copilot_home
from app.client.json_file import JsonFileError, read_object, render_edit, write_atomically
from app.hooks.agent_install import AgentConfigError, AgentInstaller, InstallReport, InstallRequest
from app.hooks.install import CAPTURE_TIMEOUT_S, COMMAND_TIMEOUT_S, command_hook, is_memoria_command

Scope = Literal["user", "project"]

AGENT = "copilot"
SESSION_START = "sessionStart"
PROMPT = "userPromptSubmitted"
TURN_END = "agentStop"
EVENTS = (SESSION_START, PROMPT, TURN_END)
FILE_NAME = "memoria.json"
FORMAT_VERSION = 1
TRUST_NOTE = "Copilot CLI reads .github/hooks only in a folder it trusts."


class CopilotConfigError(AgentConfigError):
    """The hook file cannot be read or cannot take the change; it was left as it is."""


def hooks_path(scope: Scope, project_dir: Path, config_dir: Path | None = None) -> Path:
    """Memoria's hook file: in `config_dir`'s `hooks/` when given, else the scope's hooks folder."""
    if config_dir is not None:
        return config_dir / "hooks" / FILE_NAME
    if scope == "project":
        return project_dir / ".github" / "hooks" / FILE_NAME
    return copilot_home() / "hooks" / FILE_NAME


def copilot_hook(url: str, namespace: str | None, sub: str) -> dict[str, Any]:
    """The command hook for subcommand `sub`, naming the agent; its timeout in seconds."""
    command = command_hook(url, namespace, sub, agent=AGENT)["command"]
    timeout = CAPTURE_TIMEOUT_S if sub == "capture" else COMMAND_TIMEOUT_S
    return {"type": "command", "bash": command, "timeoutSec": timeout}


def planned_hooks(
    url: str,
    namespace: str | None,
    *,
    session_start: bool = True,
    recall: bool = True,
    capture: bool = True,
) -> dict[str, dict[str, Any]]:
    """Memoria's hook for each Copilot CLI event to install (`namespace` None: per event, from its cwd)."""
    plan: dict[str, dict[str, Any]] = {}
    if session_start:
        plan[SESSION_START] = copilot_hook(url, namespace, "session-start")
    if recall:
        plan[PROMPT] = copilot_hook(url, namespace, "user-prompt-submit")
    if capture:
        plan[TURN_END] = copilot_hook(url, namespace, "capture")
    return plan


def is_memoria_entry(entry: Any) -> bool:
    return (
        isinstance(entry, dict)
        and entry.get("type") == "command"
        and is_memoria_command(str(entry.get("bash", "")))
    )


def installed(config: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Memoria's hooks in a hook file's object, per Copilot CLI event (events without any left out)."""
    hooks = config.get("hooks")
    if not isinstance(hooks, dict):
        return {}
    found = {
        event: [entry for entry in hooks.get(event) or [] if is_memoria_entry(entry)]
        for event in EVENTS
        if isinstance(hooks.get(event), list)
    }
    return {event: entries for event, entries in found.items() if entries}


def with_memoria(config: dict[str, Any], plan: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """`config` with exactly `plan`'s hooks as Memoria's: an event already holding just the planned
    hook is left as it is, others lose ours and get the planned one at their end."""
    result = copy.deepcopy(config)
    result.setdefault("version", FORMAT_VERSION)
    hooks = result.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise CopilotConfigError('"hooks" is not an object')
    for event in EVENTS:
        entries = hooks.get(event)
        if entries is not None and not isinstance(entries, list):
            raise CopilotConfigError(f'"hooks.{event}" is not a list')
        wanted = plan.get(event)
        ours = [entry for entry in entries or [] if is_memoria_entry(entry)]
        if (wanted is not None and ours == [wanted]) or (wanted is None and not ours):
            continue
        kept = [entry for entry in entries or [] if not is_memoria_entry(entry)]
        if wanted is not None:
            hooks[event] = [*kept, wanted]
        elif kept:
            hooks[event] = kept
        else:
            del hooks[event]
    return result


def without_memoria(config: dict[str, Any]) -> dict[str, Any]:
    """`config` minus Memoria's hooks; an event goes only when we emptied it."""
    result = copy.deepcopy(config)
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result
    for event in EVENTS:
        entries = hooks.get(event)
        if not isinstance(entries, list) or not any(is_memoria_entry(entry) for entry in entries):
            continue
        kept = [entry for entry in entries if not is_memoria_entry(entry)]
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    return result


def install(path: Path, plan: Mapping[str, dict[str, Any]]) -> bool:
    """True when the file changed (False: these exact hooks were already installed)."""
    current, original = read_object(path)
    updated = with_memoria(current, plan)
    if updated == current:
        return False
    write_atomically(path, render_edit(updated, original))
    return True


def uninstall(path: Path) -> bool:
    """True when a Memoria hook was removed; a file left with no hook is removed, and its `hooks`
    folder when nothing else is in it."""
    if not path.exists():
        return False
    current, original = read_object(path)
    updated = without_memoria(current)
    if updated == current:
        return False
    left = {key: value for key, value in updated.items() if (key, value) != ("hooks", {})}
    if left not in ({}, {"version": FORMAT_VERSION}):
        write_atomically(path, render_edit(updated, original))
        return True
    path.unlink()
    with contextlib.suppress(OSError):  # not empty: the person's own hook files
        path.parent.rmdir()
        if path.parent.parent.name in (".github", ".copilot"):
            path.parent.parent.rmdir()
    return True


def install_hooks(request: InstallRequest) -> InstallReport:
    """`memoria hook install --agent copilot`."""
    path = hooks_path(request.scope, request.project_dir, request.config_dir)
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
        raise CopilotConfigError(str(exc)) from exc
    return InstallReport(changed=[path] if changed else [], events=list(plan), notes=[TRUST_NOTE])


def uninstall_hooks(request: InstallRequest) -> InstallReport:
    """`memoria hook uninstall --agent copilot`."""
    path = hooks_path(request.scope, request.project_dir, request.config_dir)
    try:
        removed = uninstall(path)
    except JsonFileError as exc:
        raise CopilotConfigError(str(exc)) from exc
    return InstallReport(changed=[path] if removed else [])


def installed_events(config_dir: Path | None) -> tuple[Path, list[str]]:
    """For `memoria status`: the user's Memoria hook file (or the one in `config_dir`) and the
    Copilot CLI events Memoria's hooks are installed on there."""
    path = hooks_path("user", Path.cwd(), config_dir)
    try:
        config, _ = read_object(path)
    except JsonFileError as exc:
        raise CopilotConfigError(str(exc)) from exc
    return path, list(installed(config))


COPILOT = AgentInstaller(
    name=AGENT,
    label="GitHub Copilot CLI",
    executable="copilot",
    install=install_hooks,
    uninstall=uninstall_hooks,
    installed=installed_events,
)
