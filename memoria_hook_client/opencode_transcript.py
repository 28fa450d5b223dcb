"""Turn the new part of an OpenCode session, as Memoria's plugin writes it, into exchanges to capture.

OpenCode keeps its sessions in a database of its own; its plugin API hands out a session's
messages (`client.session.messages`) as `{"info": ..., "parts": [...]}` records. When a session
goes idle, Memoria's plugin (`app/hooks/opencode_plugin.js`) writes those records, one JSON object
per line, to `<state dir>/opencode/<session id>.jsonl` and runs the capture hook on it
(`hook_event_name` `Stop`). It writes every message up to the first one still being written, and
keeps of each only what no longer changes once the message is complete:

- `info`: `id`, `role` (`user`, `assistant`), `time` (`created`, `completed`, milliseconds),
  `finish` (an assistant message's: `stop`, `tool-calls`, `length`, ...), `path.cwd`;
- `parts`: the `text` parts OpenCode did not add itself (a part marked `synthetic`, Memoria's
  context included, is left out, so recalled memories are never captured back), and the `tool`
  parts' `tool` and `state.status`, `state.input`, `state.error` (not their output).

So the file only grows, each line stays as it was written, and a byte offset is a cursor, as in
every other agent's session file (`memoria_hook_client.transcript`, whose `Delta`, line walk and
limits this shares). One exchange is a user message's text, the model's text after its last tool
round trip (an assistant message whose `finish` is not `tool-calls`), and a digest of the tools
used on the way.

Standard library only, without pathlib or typing at run time: the capture hook imports it.
"""

from __future__ import annotations

import json
import time

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

#: OpenCode's tool names (1.18) and the argument that names what they touched.
EDIT_TOOLS = ("edit", "write", "patch", "multiedit")
READ_TOOLS = ("read",)
SHELL_TOOLS = ("bash",)
AGENT_TOOLS = ("task",)
#: An assistant message that ends so is followed by the tools' results and another message.
TOOL_FINISHES = ("tool-calls", "unknown")


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
    """The message record on one line; None for blank and broken lines."""
    if not raw.strip():
        return None
    try:
        record = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        return None  # one bad line must not stop capture of the rest
    if not isinstance(record, dict) or not isinstance(record.get("info"), dict):
        return None
    return record if isinstance(record["info"].get("id"), str) else None


def _parts(record: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    parts = record.get("parts")
    if not isinstance(parts, list):
        return []
    return [p for p in parts if isinstance(p, dict) and p.get("type") == kind and not p.get("synthetic")]


def _text(record: dict[str, Any]) -> str:
    return "\n".join(p["text"] for p in _parts(record, "text") if isinstance(p.get("text"), str)).strip()


def genuine_prompt(record: dict[str, Any]) -> str | None:
    """What the person typed, when `record` is their message; None for everything else."""
    if record["info"].get("role") != "user":
        return None
    return _text(record) or None


def _iso(milliseconds: Any) -> str | None:
    if not isinstance(milliseconds, int) or isinstance(milliseconds, bool) or milliseconds <= 0:
        return None
    seconds, millis = divmod(milliseconds, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def _time(record: dict[str, Any], which: str) -> str | None:
    stamps = record["info"].get("time")
    return _iso(stamps.get(which)) if isinstance(stamps, dict) else None


class _Exchange:
    """One prompt and the messages that followed it, gathered line by line."""

    def __init__(self, session_id: str, turn: int, offset: int, prompt: str, record: dict[str, Any]):
        self.session_id = session_id
        self.turn = turn
        self.offset = offset
        self.prompt = prompt
        self.started_at = _time(record, "created")
        self.ended_at = self.started_at
        self.cwd: str | None = None
        #: the model's text after its last tool round trip
        self.reply = ""
        #: True while the model owes an answer (after the prompt, or a message ending in tool calls)
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
        info = record["info"]
        if info.get("role") != "assistant":
            return
        self.ended_at = _time(record, "completed") or _time(record, "created") or self.ended_at
        path = info.get("path")
        if isinstance(path, dict) and isinstance(path.get("cwd"), str):
            self.cwd = path["cwd"][:MAX_CWD_CHARS]
        for part in _parts(record, "tool"):
            self._tool(part)
        said = _text(record)
        if info.get("finish") in TOOL_FINISHES:
            self.awaiting = True
            if said:
                self.reply = said
            return
        if said:
            self.reply = said
            self.awaiting = False

    def _tool(self, part: dict[str, Any]) -> None:
        name = part.get("tool")
        state = part.get("state")
        state = state if isinstance(state, dict) else {}
        args = state.get("input")
        args = args if isinstance(args, dict) else {}
        if name in EDIT_TOOLS:
            self._note("files_touched", args.get("filePath"))
        elif name in READ_TOOLS:
            self._note("files_read", args.get("filePath"))
        elif name in SHELL_TOOLS:
            command = args.get("command")
            if isinstance(command, str):
                self._note("commands", first_line(command))
        elif name in AGENT_TOOLS:
            self._note("subagents", args.get("subagent_type") or args.get("description"))
        if state.get("status") == "error":
            error = state.get("error")
            self._note("errors", first_line(error) if isinstance(error, str) else f"{name} failed")

    def complete(self, turn_over: bool) -> bool:
        """The model answered last, in text, with no tool call (or the event says the turn is over)."""
        if not self.reply:
            return False
        return turn_over or not self.awaiting

    def as_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "turn": self.turn,
            "prompt": self.prompt.replace("\x00", "")[:MAX_TEXT_CHARS],
            "reply": self.reply.replace("\x00", "")[:MAX_TEXT_CHARS],
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "cwd": self.cwd,
            "git_branch": None,
            "digest": {name: list(items) for name, items in self.digest.items()},
        }
