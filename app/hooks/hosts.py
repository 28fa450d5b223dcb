"""The coding agents ("hosts") whose hooks Memoria answers, and what differs between them.

Every host gets the same two routes, `/v1/hooks/<name>/user-prompt-submit` and
`/v1/hooks/<name>/session-start`, answered by the same handlers (`app.hooks.routes`), and its own
capture route, `/v1/capture/<name>` (`app.capture.routes`), whose episodes record the host as their
`source`. What a host changes is written here, once:

- `prompt_event` / `start_event`: the event names the host gives its prompt and session-start hooks
  (the `hook_event_name` it sends, echoed in the answer's `hookEventName`);
- `max_context_chars` (and `max_context_bytes` for a host that counts bytes): the most context the
  host takes from one hook answer as it documents it, less a margin, so that an answer never
  reaches the point where the host cuts it, previews it or spills it to a file; the routes inject
  at most this much, whatever the settings allow;
- `answer`: how an answer is shaped for the host.

The stdlib-only hook client keeps its own list of the same names (`memoria_hook_client.agents`:
how each host's stdin payload reads); `tests/test_hook_hosts.py` holds the two lists together.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def hook_specific_output(event_name: str, text: str) -> dict[str, Any]:
    """The answer shape Claude Code introduced and Codex CLI reads as is: the text under
    `hookSpecificOutput.additionalContext`, naming the event it answers."""
    return {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}}


def bare_additional_context(event_name: str, text: str) -> dict[str, Any]:
    """GitHub Copilot CLI's answer shape: `additionalContext` at the top of the object (its
    sessionStart and userPromptSubmitted outputs), with no event name."""
    return {"additionalContext": text}


def snake_additional_context(event_name: str, text: str) -> dict[str, Any]:
    """Cursor's answer shape: `additional_context` at the top of the object (its sessionStart output),
    with no event name."""
    return {"additional_context": text}


@dataclass(frozen=True, slots=True)
class Host:
    """One coding agent whose hook events Memoria answers."""

    name: str
    """In the routes' paths, the client's `--agent`, and the `source` of its captured episodes."""
    label: str
    """As people call it (in route summaries and messages)."""
    max_context_chars: int
    """The most characters of context one answer carries, below the host's documented limit."""
    max_context_bytes: int | None = None
    """The most UTF-8 bytes of context one answer carries, for a host whose limit counts bytes."""
    prompt_event: str = "UserPromptSubmit"
    start_event: str = "SessionStart"
    answer: Callable[[str, str], dict[str, Any]] = hook_specific_output
    """(event name, text) -> the JSON object the host reads the context from."""

    def context(self, event_name: str, text: str) -> dict[str, Any]:
        return self.answer(event_name, text)


CLAUDE_CODE = Host(
    name="claude-code",
    label="Claude Code",
    # Claude Code replaces an additionalContext over 10,000 characters with a preview.
    max_context_chars=9_000,
)
CODEX = Host(
    name="codex",
    label="Codex CLI",
    max_context_chars=9_000,
    # Codex spills hook text over 2,500 tokens to a file and leaves the model a preview; it
    # estimates a token per 4 bytes of UTF-8 (rounded up), so 2,400 tokens' worth of bytes.
    max_context_bytes=9_600,
)

GEMINI = Host(
    name="gemini",
    label="Gemini CLI",
    # Gemini CLI documents no limit on a hook's additionalContext; it adds the text to the prompt's
    # turn (SessionStart's to the first prompt), so it is held to Claude Code's bound.
    max_context_chars=9_000,
    prompt_event="BeforeAgent",
)

QWEN = Host(
    name="qwen",
    label="Qwen Code",
    # Qwen Code (a Gemini CLI fork) takes Claude Code's events and answer shape and documents no
    # limit on additionalContext (it appends the text to the prompt's turn): held to Claude Code's.
    max_context_chars=9_000,
)

OPENCODE = Host(
    name="opencode",
    label="OpenCode",
    # OpenCode has no command hooks: Memoria's plugin (`app.hooks.opencode_plugin`) runs the hook
    # client and adds its answer to the prompt's message as a text part of its own. OpenCode
    # documents no limit on a part: held to Claude Code's bound.
    max_context_chars=9_000,
)

COPILOT = Host(
    name="copilot",
    label="GitHub Copilot CLI",
    # Copilot CLI documents no limit on additionalContext but the 10 MiB it reads of one hook's
    # output; it adds sessionStart's text as a user message before the first prompt and
    # userPromptSubmitted's in a <system_reminder> after the prompt: held to Claude Code's bound.
    max_context_chars=9_000,
    prompt_event="userPromptSubmitted",
    start_event="sessionStart",
    answer=bare_additional_context,
)

CURSOR = Host(
    name="cursor",
    label="Cursor",
    # Cursor documents no limit on sessionStart's additional_context (it adds the text to the
    # conversation's initial system context): held to Claude Code's bound. Its prompt event,
    # beforeSubmitPrompt, can only let a prompt through or block it, so the prompt route's answer
    # is never installed for Cursor (`app.hooks.install_cursor`).
    max_context_chars=9_000,
    prompt_event="beforeSubmitPrompt",
    start_event="sessionStart",
    answer=snake_additional_context,
)

HOSTS: dict[str, Host] = {
    host.name: host for host in (CLAUDE_CODE, CODEX, GEMINI, QWEN, OPENCODE, COPILOT, CURSOR)
}
"""Every host, by name: one set of hook routes and one capture route each."""


def host_named(name: str) -> Host | None:
    return HOSTS.get(name)
