"""The coding agents the hook client serves (`memoria-hook --agent <name> <subcommand>`).

Each agent has its own hook routes on the server (`/v1/hooks/<name>/…`, answered in that agent's
shape and within its context limit: `app.hooks.hosts`, which lists the same names) and its own
capture route (`/v1/capture/<name>`: the episodes record the agent). What differs on this side:

- `FIELD_NAMES`: the agent's stdin payload fields that the server knows under another name (the
  server reads Claude Code's: `prompt`, `session_id`, `source`, `hook_event_name`); Claude Code and
  Codex CLI send those as they are;
- `TRANSCRIPTS`: the module that reads the agent's session transcript for capture; an agent not
  in it has no capture (Cursor: it documents no transcript format the capture hook could read).

Without `--agent` the agent is Claude Code, so hooks installed before there were others keep
working. Standard library only, and nothing imported at run time but what a hook needs.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

DEFAULT_AGENT = "claude-code"
AGENTS = ("claude-code", "codex", "gemini", "qwen", "opencode", "copilot", "cursor")
#: Per agent: {its payload's field: the field the server reads}; agents not named send ours as is.
#: GitHub Copilot CLI sends camelCase (`sessionId`, `transcriptPath`) and no event name.
FIELD_NAMES: dict[str, dict[str, str]] = {
    "copilot": {"sessionId": "session_id", "transcriptPath": "transcript_path"},
}
#: Per agent: the module with `read_delta` for its session transcript (imported when capture runs).
TRANSCRIPTS = {
    "claude-code": "memoria_hook_client.transcript",
    "codex": "memoria_hook_client.codex_transcript",
    "gemini": "memoria_hook_client.gemini_transcript",
    "qwen": "memoria_hook_client.qwen_transcript",
    "opencode": "memoria_hook_client.opencode_transcript",
    "copilot": "memoria_hook_client.copilot_transcript",
}
#: Per agent: the module whose `normalised(event)` rewrites its payload beyond field names
#: (imported when its hook runs).
PAYLOADS = {
    "gemini": "memoria_hook_client.gemini",
    "copilot": "memoria_hook_client.copilot",
    "cursor": "memoria_hook_client.cursor",
}


class UnknownAgent(ValueError):
    """`--agent` names no agent this client knows, or has no value."""


def split_agent(argv: Sequence[str]) -> tuple[str, list[str]]:
    """(the agent `--agent NAME` or `--agent=NAME` names, else the default; argv without it)."""
    rest: list[str] = []
    agent = DEFAULT_AGENT
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--agent":
            if not args:
                raise UnknownAgent("--agent needs a name: " + ", ".join(AGENTS))
            agent = args.pop(0)
        elif arg.startswith("--agent="):
            agent = arg[len("--agent=") :]
        else:
            rest.append(arg)
    if agent not in AGENTS:
        raise UnknownAgent(f"unknown agent {agent!r}; one of: " + ", ".join(AGENTS))
    return agent, rest


def hook_route(agent: str, sub: str) -> str:
    """The server route answering `sub` (user-prompt-submit, session-start) for `agent`."""
    return f"/v1/hooks/{agent}/{sub}"


def capture_route(agent: str) -> str:
    return f"/v1/capture/{agent}"


def normalised_event(agent: str, event: Mapping[str, Any]) -> dict[str, Any]:
    """`event` with the agent's own field names replaced by the ones the server reads."""
    names = FIELD_NAMES.get(agent)
    renamed = {names.get(name, name): value for name, value in event.items()} if names else dict(event)
    if agent in PAYLOADS:
        from importlib import import_module

        normalised: dict[str, Any] = import_module(PAYLOADS[agent]).normalised(renamed)
        return normalised
    return renamed
