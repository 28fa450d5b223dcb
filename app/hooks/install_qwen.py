"""Merge Memoria's Qwen Code hooks into a Qwen Code settings file, and take them out again.

Qwen Code (a fork of Gemini CLI) reads hooks from the `hooks` object of `~/.qwen/settings.json`
(user) and `<project>/.qwen/settings.json` (project), in Claude Code's shape and under Claude Code's
event names, and hands a command hook Claude Code's payload (`session_id`, `transcript_path`, `cwd`,
`hook_event_name`, `prompt`) and reads Claude Code's answer (`hookSpecificOutput.additionalContext`).
Memoria installs:

- SessionStart -> `session-start`: its `additionalContext` goes into the session's first turn;
- UserPromptSubmit -> `user-prompt-submit`: recall for each prompt, its `additionalContext` added
  to the prompt's turn;
- Stop (each turn's end, also in `qwen -p`), PreCompact and SessionEnd -> `capture`, which reads
  the session file (`transcript_path`, `~/.qwen/projects/<cwd>/chats/<session>.jsonl`:
  `memoria_hook_client.qwen_transcript`).

Timeouts: Qwen Code 0.24.4 reads a command hook's `timeout` in seconds, except that a value of
1000 or more keeps its older meaning, milliseconds; earlier releases read milliseconds only. Memoria
writes milliseconds of 1000 or more, which every release reads the same way.

The writing is `app.hooks.install_settings_json`'s, shared with Gemini CLI: only Memoria's hooks are
touched, install then uninstall gives the file back byte for byte, and a file left holding `{}` is
removed, with its `.qwen` directory when that is left empty.
"""

from __future__ import annotations

from app.hooks.agent_install import AgentConfigError
from app.hooks.install_settings_json import SettingsJsonHost

AGENT = "qwen"
SESSION_START = "SessionStart"
PROMPT = "UserPromptSubmit"
CAPTURE_EVENTS = ("Stop", "PreCompact", "SessionEnd")
EVENTS = (SESSION_START, PROMPT, *CAPTURE_EVENTS)
#: Milliseconds Qwen Code waits: the client's own budget (1.5 s) plus slack for a cold start.
COMMAND_TIMEOUT_MS = 3000
#: The capture hook spools and hands the sending to a detached process; this bounds a slow disk.
CAPTURE_TIMEOUT_MS = 10000


class QwenConfigError(AgentConfigError):
    """The settings file cannot be read or is not a JSON object; it was left as it is."""


HOST = SettingsJsonHost(
    agent=AGENT,
    label="Qwen Code",
    executable="qwen",
    folder=".qwen",
    session_start=SESSION_START,
    prompt=PROMPT,
    capture_events=CAPTURE_EVENTS,
    command_timeout_ms=COMMAND_TIMEOUT_MS,
    capture_timeout_ms=CAPTURE_TIMEOUT_MS,
    error=QwenConfigError,
)
settings_path = HOST.settings_path
planned_hooks = HOST.planned_hooks
installed = HOST.installed
install = HOST.install
uninstall = HOST.uninstall
QWEN = HOST.installer()
