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

The writing is `app.hooks.install_flat_hooks`'s, shared with Copilot CLI: only Memoria's hook is
touched (judged on the parsed command, as for Claude Code), a person's own hooks keep their place and
exact text, a second install changes nothing, and install then uninstall gives the file back byte for
byte. A file the install created is removed by the uninstall once it holds nothing but the `version`
it was given, with its `.cursor` folder when that is left empty.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.hooks.agent_install import AgentConfigError
from app.hooks.install import COMMAND_TIMEOUT_S, command_hook, is_memoria_command
from app.hooks.install_flat_hooks import FlatHooksHost
from app.hooks.install_hook_file import Scope

AGENT = "cursor"
SESSION_START = "sessionStart"
EVENTS = (SESSION_START,)
FOLDER = ".cursor"
FILE_NAME = "hooks.json"
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


def is_memoria_entry(entry: Any) -> bool:
    """Cursor's hooks are commands whether or not they say so (`type` is optional)."""
    return (
        isinstance(entry, dict)
        and entry.get("type", "command") == "command"
        and is_memoria_command(str(entry.get("command", "")))
    )


HOST = FlatHooksHost(
    agent=AGENT,
    label="Cursor",
    executable="cursor-agent",
    other_executables=("cursor",),
    subcommands={SESSION_START: "session-start"},
    hooks_file=hooks_path,
    make_hook=cursor_hook,
    is_memoria_entry=is_memoria_entry,
    created_folders=((FOLDER,),),
    error=CursorConfigError,
    notes=(NOT_INSTALLED_NOTE,),
    project_notes=(TRUST_NOTE,),
)
planned_hooks = HOST.planned_hooks
installed = HOST.installed
install = HOST.install
uninstall = HOST.uninstall
install_hooks = HOST.install_hooks
uninstall_hooks = HOST.uninstall_hooks
CURSOR = HOST.installer()
