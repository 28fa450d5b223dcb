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

The writing is `app.hooks.install_flat_hooks`'s, shared with Cursor: only Memoria's hooks are
touched (judged on the parsed `bash` command, as for Claude Code), a person's own hooks in the same
file keep their place and exact text, a second install changes nothing, and install then uninstall
gives the file back byte for byte. A file left holding no hook but the `version` an install wrote is
removed, with its `hooks` folder (and the `.copilot` or `.github` folder holding it) when that is
left empty.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.client.copilot_home import copilot_home
from app.hooks.agent_install import AgentConfigError
from app.hooks.install import CAPTURE_TIMEOUT_S, COMMAND_TIMEOUT_S, command_hook, is_memoria_command
from app.hooks.install_flat_hooks import FlatHooksHost
from app.hooks.install_hook_file import Scope

AGENT = "copilot"
SESSION_START = "sessionStart"
PROMPT = "userPromptSubmitted"
TURN_END = "agentStop"
EVENTS = (SESSION_START, PROMPT, TURN_END)
FILE_NAME = "memoria.json"
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


def is_memoria_entry(entry: Any) -> bool:
    """Copilot's hooks say their `type`; ours is a command hook whose `bash` runs the hook client."""
    return (
        isinstance(entry, dict)
        and entry.get("type") == "command"
        and is_memoria_command(str(entry.get("bash", "")))
    )


HOST = FlatHooksHost(
    agent=AGENT,
    label="GitHub Copilot CLI",
    executable="copilot",
    subcommands={SESSION_START: "session-start", PROMPT: "user-prompt-submit", TURN_END: "capture"},
    hooks_file=hooks_path,
    make_hook=copilot_hook,
    is_memoria_entry=is_memoria_entry,
    created_folders=(("hooks",), (".github", ".copilot")),
    error=CopilotConfigError,
    notes=(TRUST_NOTE,),
)
planned_hooks = HOST.planned_hooks
installed = HOST.installed
install = HOST.install
uninstall = HOST.uninstall
install_hooks = HOST.install_hooks
uninstall_hooks = HOST.uninstall_hooks
COPILOT = HOST.installer()
