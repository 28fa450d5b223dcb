"""Turn the new part of a Qwen Code session file (JSONL) into exchanges the capture route stores.

Qwen Code hands every hook the session file as `transcript_path`
(`~/.qwen/projects/<cwd with / as ->/chats/<session id>.jsonl`) and appends one record per line
(`uuid`, `parentUuid`, `sessionId`, `timestamp`, `type`, `cwd`, `provenance`, and for messages a
Gemini-style `message` with `parts`): `user` (a prompt; typed ones carry `provenance: real_user`
and `systemPayload.displayText`, what the person typed), `assistant` (`text` parts, `thought`
parts, `functionCall` parts), `tool_result` (`functionResponse` parts and `toolCallResult` with its
`status` and `error`), and `system` bookkeeping (telemetry, attribution snapshots, slash commands).
`--continue` and `--resume` append to the same file.

One exchange is, as for Claude Code (`memoria_hook_client.transcript`, whose walk, `Delta` and limits
this shares): a genuine prompt, the model's final text after the last tool round trip, and a digest
of the tools used on the way. What is particular to Qwen Code:
- A prompt's hook context (Memoria's own included) is a part of its own,
  `<qwen:user-prompt-submit-context>…</qwen:…>`; the prompt is `displayText` when there is one,
  else the text parts without such spans, so recalled memories are never captured back as if the
  person had typed them.
- A `user` record with a `subtype` (a message typed while tools ran, a notification) or with a
  provenance other than a person's (a goal's runtime message, a subagent) opens no exchange.
- The model's turn is over when an `assistant` record has text and no function call; Stop
  (`turn_over`) and SessionEnd (`final`) also end it.
- Each record names its `cwd`; the branch is not recorded.

Standard library only, without pathlib or typing at run time: the capture hook imports it.
"""

from __future__ import annotations

import json
import re

from memoria_hook_client.transcript import (
    DIGEST_FIELDS,
    MAX_CWD_CHARS,
    MAX_DIGEST_ITEM_CHARS,
    MAX_DIGEST_ITEMS,
    MAX_TEXT_CHARS,
    Delta,
    first_line,
    gather,
    read_with,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memoria_hook_client.transcript import Gathered

#: A hook's context as Qwen Code 0.24.4 adds it to the prompt's record (`<` and `>` of the context escaped).
HOOK_CONTEXT = re.compile(r"<qwen:[a-z-]+-context>.*?</qwen:[a-z-]+-context>\s*", re.DOTALL)
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})\Z")
#: Who a typed prompt comes from (older releases write no provenance).
PERSON = (None, "real_user")

#: Qwen Code's tool names (0.24.4) and the argument that names what they touched.
EDIT_TOOLS = ("write_file", "edit")
READ_TOOLS = ("read_file",)
SHELL_TOOLS = ("run_shell_command",)
AGENT_TOOLS = ("agent",)


def without_hook_context(text: str) -> str:
    """`text` without what hooks added to it, stripped."""
    return HOOK_CONTEXT.sub("", text).strip()


def read_delta(
    path: str, offset: int, turn: int, session_id: str, final: bool = False, turn_over: bool = False
) -> Delta:
    """The exchanges in the session file `path` from byte `offset` on (`turn` prompts before it);
    read as `memoria_hook_client.transcript.read_delta` reads Claude Code's."""
    return read_with(parse_delta, path, offset, turn, session_id, final, turn_over)


def parse_delta(
    data: bytes, offset: int, turn: int, session_id: str, final: bool = False, turn_over: bool = False
) -> Delta:
    """`read_delta` on bytes already read from `offset`; only whole lines count."""

    def opens(record: dict[str, Any], _current: Gathered | None, turn: int, at: int) -> Gathered | None:
        prompt = genuine_prompt(record)
        return None if prompt is None else _Exchange(session_id, turn, at, prompt, record)

    return gather(data, offset, turn, final, turn_over, _record, opens)


def _record(raw: bytes) -> dict[str, Any] | None:
    """The message record on one line; None for blank, broken and bookkeeping lines."""
    if not raw.strip():
        return None
    try:
        record = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        return None  # one bad line must not stop capture of the rest
    if not isinstance(record, dict) or record.get("type") not in ("user", "assistant", "tool_result"):
        return None
    return record


def _parts(record: dict[str, Any]) -> list[dict[str, Any]]:
    message = record.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    return [part for part in parts if isinstance(part, dict)] if isinstance(parts, list) else []


def genuine_prompt(record: dict[str, Any]) -> str | None:
    """What the person typed, when `record` is a prompt; None for everything else."""
    if record.get("type") != "user" or record.get("subtype") is not None:
        return None
    if record.get("provenance") not in PERSON:
        return None
    parts = _parts(record)
    if any("functionResponse" in part for part in parts):
        return None
    payload = record.get("systemPayload")
    shown = payload.get("displayText") if isinstance(payload, dict) else None
    if isinstance(shown, str) and shown.strip():
        return shown.strip()
    texts = [without_hook_context(part["text"]) for part in parts if isinstance(part.get("text"), str)]
    text = "\n".join(kept for kept in texts if kept)
    return text or None


def _timestamp(record: dict[str, Any]) -> str | None:
    value = record.get("timestamp")
    return value if isinstance(value, str) and _RFC3339.match(value) else None


class _Exchange:
    """One prompt and the records that followed it, gathered line by line."""

    def __init__(self, session_id: str, turn: int, offset: int, prompt: str, record: dict[str, Any]):
        self.session_id = session_id
        self.turn = turn
        self.offset = offset
        self.prompt = prompt
        self.started_at = _timestamp(record)
        self.ended_at = self.started_at
        cwd = record.get("cwd")
        self.cwd = cwd[:MAX_CWD_CHARS] if isinstance(cwd, str) and cwd else None
        #: text parts of the model's answer after the last tool round trip
        self.reply: list[str] = []
        self._restart_reply = False
        #: True while the model owes an answer (after the prompt, or a record with function calls)
        self.awaiting = True
        self.digest: dict[str, list[str]] = {name: [] for name in DIGEST_FIELDS}

    def _note(self, field: str, value: Any) -> None:
        if not isinstance(value, str):
            return
        value = value.replace("\x00", "").strip()
        if not value:
            return
        if len(value) > MAX_DIGEST_ITEM_CHARS:
            value = value[: MAX_DIGEST_ITEM_CHARS - 1] + "…"
        items = self.digest[field]
        if value not in items and len(items) < MAX_DIGEST_ITEMS:
            items.append(value)

    def add(self, record: dict[str, Any]) -> None:
        kind = record.get("type")
        if kind == "tool_result":  # the model answers the results next
            self.awaiting = True
            self._restart_reply = True
            self._result(record)
            return
        if kind != "assistant":
            return  # a message typed while tools ran goes to the model with their results
        stamp = _timestamp(record)
        if stamp:
            self.ended_at = stamp
        parts = _parts(record)
        calls = [part["functionCall"] for part in parts if isinstance(part.get("functionCall"), dict)]
        for call in calls:
            self._tool(call)
        said = "".join(
            part["text"] for part in parts if isinstance(part.get("text"), str) and not part.get("thought")
        ).strip()
        if said:
            if self._restart_reply:
                self.reply = []
                self._restart_reply = False
            self.reply.append(said)
        if calls:
            self.awaiting = True
            self._restart_reply = True
        elif said:
            self.awaiting = False

    def _tool(self, call: dict[str, Any]) -> None:
        name = call.get("name")
        args = call.get("args")
        if not isinstance(args, dict):
            return
        if name in EDIT_TOOLS:
            self._note("files_touched", args.get("file_path"))
        elif name in READ_TOOLS:
            self._note("files_read", args.get("file_path"))
        elif name in SHELL_TOOLS:
            command = args.get("command")
            if isinstance(command, str):
                self._note("commands", first_line(command))
        elif name in AGENT_TOOLS:
            self._note("subagents", args.get("subagent_type") or args.get("description"))

    def _result(self, record: dict[str, Any]) -> None:
        result = record.get("toolCallResult")
        if not isinstance(result, dict) or result.get("status") != "error":
            return
        error = result.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        display = result.get("resultDisplay")
        said = message if isinstance(message, str) and message.strip() else display
        self._note("errors", first_line(said) if isinstance(said, str) else "a tool call failed")

    def complete(self, turn_over: bool) -> bool:
        """The model answered last, in text, with no function call (or the event says the turn is over)."""
        if not self.reply:
            return False
        return turn_over or not self.awaiting

    def as_dict(self) -> dict[str, Any]:
        reply = "\n\n".join(self.reply)
        return {
            "session_id": self.session_id,
            "turn": self.turn,
            "prompt": self.prompt.replace("\x00", "")[:MAX_TEXT_CHARS],
            "reply": reply.replace("\x00", "")[:MAX_TEXT_CHARS],
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "cwd": self.cwd,
            "git_branch": None,
            "digest": {name: list(items) for name, items in self.digest.items()},
        }
