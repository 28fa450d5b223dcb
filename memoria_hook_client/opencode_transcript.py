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
every other agent's session file (`memoria_hook_client.transcript`, whose `Delta` and line walk
this shares). One exchange (`memoria_hook_client.exchange`) is a user message's text, the model's
text after its last tool round trip (an assistant message whose `finish` is not `tool-calls`), and
a digest of the tools used on the way.

Standard library only, without pathlib or typing at run time: the capture hook imports it.
"""

from __future__ import annotations

import time

from memoria_hook_client.exchange import Exchange, Tools, json_object
from memoria_hook_client.transcript import Delta, at_prompts, gather, read_with

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: OpenCode's tool names (1.18) and the arguments that name what they touched.
TOOLS = Tools(
    edits=("edit", "write", "patch", "multiedit"),
    reads=("read",),
    shells=("bash",),
    agents=("task",),
    edit_args=("filePath",),
    read_args=("filePath",),
)
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
    return gather(
        data, offset, turn, final, turn_over, _record, at_prompts(session_id, genuine_prompt, _Exchange)
    )


def _record(raw: bytes) -> dict[str, Any] | None:
    """The message record on one line; None for blank and broken lines."""
    record = json_object(raw)
    if record is None or not isinstance(record.get("info"), dict):
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


class _Exchange(Exchange):
    """An OpenCode prompt and the messages that followed it: the reply is the text of the model's
    latest message that has any, the cwd that of the latest message that names one."""

    tools = TOOLS

    def __init__(self, session_id: str, turn: int, offset: int, prompt: str, record: dict[str, Any]):
        super().__init__(session_id, turn, offset, prompt, _time(record, "created"))

    def add(self, record: dict[str, Any]) -> None:
        info = record["info"]
        if info.get("role") != "assistant":
            return
        self.ended_at = _time(record, "completed") or _time(record, "created") or self.ended_at
        path = info.get("path")
        if isinstance(path, dict) and isinstance(path.get("cwd"), str):
            self.cwd = path["cwd"]
        for part in _parts(record, "tool"):
            self._tool(part)
        said = _text(record)
        if said:
            self.reply = [said]
        if info.get("finish") in TOOL_FINISHES:
            self.awaiting = True
        elif said:
            self.awaiting = False

    def _tool(self, part: dict[str, Any]) -> None:
        name = part.get("tool")
        state = part.get("state")
        state = state if isinstance(state, dict) else {}
        args = state.get("input")
        self.note_tool(name, args if isinstance(args, dict) else {})
        if state.get("status") == "error":
            self.note_error(state.get("error"), f"{name} failed")
