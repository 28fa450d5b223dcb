"""Turn the new part of a Codex CLI session file (its "rollout", JSONL) into exchanges to capture.

Codex writes one JSON object per line to `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-<id>.jsonl` (the
hooks' `transcript_path`): `{"timestamp", "type", "payload"}` where `type` is `session_meta`,
`turn_context`, `response_item` (what the model saw and said: messages, `function_call`,
`function_call_output`, `custom_tool_call`) or `event_msg` (what happened: `task_started`,
`item_completed`, `task_complete`, token counts). Read off Codex 0.171.0 (a recorded session is in
`tests/fixtures/codex-rollout-0.171.0.jsonl`):

- a prompt is an `event_msg` `item_completed` whose item is a `UserMessage` (older Codex: an
  `event_msg` `user_message`), never a `response_item` user message: those also carry Codex's
  `<environment_context>` and the hooks' added context;
- the reply is the assistant's last `response_item` message after the last tool call;
- tool calls go into the digest: `exec_command`/`shell` commands, files named by `apply_patch`, and
  the first line of a command that exited non-zero;
- the turn ends at `task_complete` (or at the Stop hook's event, `turn_over`, once a reply is in).

Offsets, turns and pending exchanges work as for Claude Code's transcript
(`memoria_hook_client.transcript`, whose walk and `Delta` this reuses; the exchange is
`memoria_hook_client.exchange`'s). Standard library only.
"""

from __future__ import annotations

import json
import re

from memoria_hook_client.exchange import Exchange, blocks_text, first_line, json_object, timestamp
from memoria_hook_client.transcript import Delta, gather, read_with

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SHELL_TOOLS = ("exec_command", "shell", "local_shell")
_PATCHED_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)
_EXIT_CODE = re.compile(r"(?:Process exited with code|Exit code:) (-?\d+)")


def read_delta(
    path: str, offset: int, turn: int, session_id: str, final: bool = False, turn_over: bool = False
) -> Delta:
    """The exchanges in the rollout at `path` from byte `offset` on (see `transcript.read_delta`)."""
    return read_with(parse_delta, path, offset, turn, session_id, final, turn_over)


def parse_delta(
    data: bytes, offset: int, turn: int, session_id: str, final: bool = False, turn_over: bool = False
) -> Delta:
    """`read_delta` on bytes already read from `offset`. A prompt Codex records twice in a row (as
    its event and as its message) opens one exchange."""
    context: dict[str, str | None] = {"cwd": None, "branch": None}

    def opens(entry: dict[str, Any], current: Exchange | None, turn: int, at: int) -> Exchange | None:
        _note_context(entry, context)
        prompt = user_prompt(entry)
        if prompt is None or (isinstance(current, _Exchange) and current.repeats(prompt)):
            return None
        return _Exchange(session_id, turn, at, prompt, entry, context)

    return gather(data, offset, turn, final, turn_over, _entry, opens)


def _entry(raw: bytes) -> dict[str, Any] | None:
    entry = json_object(raw)
    return entry if entry is not None and isinstance(entry.get("payload"), dict) else None


def _note_context(entry: dict[str, Any], context: dict[str, str | None]) -> None:
    """The session's directory and git branch, from `session_meta` and each `turn_context`."""
    payload = entry["payload"]
    if entry.get("type") not in ("session_meta", "turn_context"):
        return
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and cwd:
        context["cwd"] = cwd
    git = payload.get("git")
    branch = git.get("branch") if isinstance(git, dict) else None
    if isinstance(branch, str) and branch:
        context["branch"] = branch


def user_prompt(entry: dict[str, Any]) -> str | None:
    """The text the person typed, when `entry` records a prompt; None for everything else."""
    if entry.get("type") != "event_msg":
        return None
    payload = entry["payload"]
    if payload.get("type") == "user_message" and isinstance(payload.get("message"), str):
        return str(payload["message"])
    item = payload.get("item")
    if (
        payload.get("type") == "item_completed"
        and isinstance(item, dict)
        and item.get("type") == "UserMessage"
    ):
        return blocks_text(item.get("content"), ("text", "Text"))
    return None


class _Exchange(Exchange):
    """A Codex prompt and what followed it: the reply is what the model says after its last tool
    call, and Codex says when the turn is complete."""

    def __init__(
        self,
        session_id: str,
        turn: int,
        offset: int,
        prompt: str,
        entry: dict[str, Any],
        context: dict[str, str | None],
    ):
        super().__init__(
            session_id, turn, offset, prompt, timestamp(entry), context["cwd"], context["branch"]
        )
        self.calls = 0
        self.done = False
        self._commands: dict[str, str] = {}

    def repeats(self, prompt: str) -> bool:
        """Whether `prompt` is this exchange's own, recorded a second time (both event forms)."""
        return prompt == self.prompt and not self.reply and not self.calls

    def add(self, entry: dict[str, Any]) -> None:
        payload = entry["payload"]
        kind = payload.get("type")
        stamp = timestamp(entry)
        if stamp:
            self.ended_at = stamp
        if entry.get("type") == "event_msg":
            if kind == "task_complete":
                self.done = True
                last = payload.get("last_agent_message")
                if not self.reply and isinstance(last, str) and last.strip():
                    self.reply = [last]
            return
        if entry.get("type") != "response_item":
            return
        if kind == "message" and payload.get("role") == "assistant":
            text = blocks_text(payload.get("content"), ("output_text",))
            if text.strip():
                self.reply.append(text)
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            self.calls += 1
            self.reply = []  # what the model says after its last tool call is the reply
            self._tool(payload)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self._result(payload)

    def _tool(self, payload: dict[str, Any]) -> None:
        name = payload.get("name")
        if payload.get("type") == "custom_tool_call" and isinstance(payload.get("input"), str):
            for path in _PATCHED_FILE.findall(payload["input"]):
                self.note("files_touched", path.strip())
            return
        try:
            arguments = json.loads(payload.get("arguments") or "{}")
        except (TypeError, ValueError):
            return
        if not isinstance(arguments, dict) or name not in SHELL_TOOLS:
            return
        command = arguments.get("cmd") or arguments.get("command")
        if isinstance(command, list):
            command = " ".join(str(part) for part in command)
        if isinstance(command, str) and command.strip():
            line = first_line(command)
            self.note("commands", line)
            call_id = payload.get("call_id")
            if isinstance(call_id, str):
                self._commands[call_id] = line

    def _result(self, payload: dict[str, Any]) -> None:
        output = payload.get("output")
        if not isinstance(output, str):
            return
        code = _EXIT_CODE.search(output)
        if code is not None and code.group(1) != "0":
            self.note("errors", self._commands.get(str(payload.get("call_id")), "a command failed"))

    def complete(self, turn_over: bool) -> bool:
        """Codex said the turn is complete, or the Stop event came after a reply."""
        return self.done or (turn_over and bool(self.reply))
