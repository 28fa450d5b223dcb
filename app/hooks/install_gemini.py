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

The writing is `app.hooks.install_settings_json`'s, shared with Qwen Code (a fork of Gemini CLI):
only Memoria's hooks are touched, install then uninstall gives the file back byte for byte.
"""

from __future__ import annotations

from app.client.json_file import JsonFileError
from app.hooks.agent_install import AgentConfigError
from app.hooks.install_settings_json import SettingsJsonHost

AGENT = "gemini"
SESSION_START = "SessionStart"
PROMPT = "BeforeAgent"
CAPTURE_EVENTS = ("AfterAgent", "PreCompress", "SessionEnd")
EVENTS = (SESSION_START, PROMPT, *CAPTURE_EVENTS)
#: Milliseconds Gemini CLI waits: the client's own budget (1.5 s) plus slack for a cold start.
COMMAND_TIMEOUT_MS = 3000
#: The capture hook spools and hands the sending to a detached process; this bounds a slow disk.
CAPTURE_TIMEOUT_MS = 10000

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


HOST = SettingsJsonHost(
    agent=AGENT,
    label="Gemini CLI",
    executable="gemini",
    folder=".gemini",
    session_start=SESSION_START,
    prompt=PROMPT,
    capture_events=CAPTURE_EVENTS,
    command_timeout_ms=COMMAND_TIMEOUT_MS,
    capture_timeout_ms=CAPTURE_TIMEOUT_MS,
    error=GeminiConfigError,
    notes=(KEY_NOTE,),
    project_notes=(PROJECT_NOTE,),
)
settings_path = HOST.settings_path
planned_hooks = HOST.planned_hooks
installed = HOST.installed
install = HOST.install
uninstall = HOST.uninstall
read_installed = HOST.read_installed
GEMINI = HOST.installer()
