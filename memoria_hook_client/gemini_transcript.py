"""Turn the new part of a Gemini CLI session file (JSONL) into exchanges the capture route stores.

Gemini CLI hands every hook the session file as `transcript_path`
(`~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl`) and appends one JSON object per line:
a header (`sessionId`, `projectHash`, ...), message records (`id`, `timestamp`, `type`: `user`,
`gemini`, `info`, `warning`, `error`; `content` a string or a list of parts; a `gemini` record's
`toolCalls`), and bookkeeping (`{"$set": ...}` metadata updates, `{"$rewindTo": id}`). A record is
written again, whole, under the same `id` when it changes (a `gemini` record first bare, then with
its `toolCalls` and their results), so a later line of the same id replaces the earlier one.

One exchange is, as for Claude Code (`memoria_hook_client.transcript`, whose `Delta` and limits this
shares): a genuine prompt, the model's final text after the last tool round trip, and a digest of
the tools used on the way. What is particular to Gemini CLI:
- Context added by hooks (Memoria's own included) reaches the record as `<hook_context>…</hook_context>`
  parts, and SessionStart's as a prefix of the prompt's text: it is cut out, so recalled memories
  are never captured back as if the person had typed them. A user record whose text is only that
  (or the CLI's own `<session_context>`) is no prompt.
- A user record of `functionResponse` parts carries tool results, not a prompt.
- The model's turn is over when a `gemini` record has text and no tool calls (the API's answer
  without function calls); AfterAgent (`turn_over`) and SessionEnd (`final`) also end it.
- `$rewindTo` (an interactive rewind) is not followed: what was captured stays captured.
- The records carry no cwd or branch; those stay empty.

Standard library only, without pathlib or typing at run time: the capture hook imports it.
"""

from __future__ import annotations

import json
import re

from memoria_hook_client.transcript import (
    DIGEST_FIELDS,
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

HOOK_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>\s*", re.DOTALL)
SESSION_CONTEXT = "<session_context>"
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})\Z")

#: Gemini CLI's tool names (0.61.0) and the argument that names what they touched.
EDIT_TOOLS = ("write_file", "replace")
READ_TOOLS = ("read_file",)
SHELL_TOOLS = ("run_shell_command",)
AGENT_TOOLS = ("invoke_agent",)


def without_hook_context(text: str) -> str:
    """`text` without what hooks added to it (`<hook_context>` spans), stripped."""
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
    if not isinstance(record, dict) or not isinstance(record.get("id"), str):
        return None
    return record if isinstance(record.get("type"), str) else None


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}]
    if isinstance(content, dict):
        return [content]
    if isinstance(content, list):
        return [
            part if isinstance(part, dict) else {"text": part}
            for part in content
            if isinstance(part, (dict, str))
        ]
    return []


def _text(content: Any) -> str:
    return "\n".join(part["text"] for part in _parts(content) if isinstance(part.get("text"), str))


def genuine_prompt(record: dict[str, Any]) -> str | None:
    """What the person typed, when `record` is a prompt; None for everything else."""
    if record.get("type") != "user":
        return None
    parts = _parts(record.get("content"))
    if any("functionResponse" in part for part in parts):
        return None
    texts = [without_hook_context(part["text"]) for part in parts if isinstance(part.get("text"), str)]
    text = "\n".join(kept for kept in texts if kept)
    if not text or text.startswith(SESSION_CONTEXT):
        return None
    return text


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
        #: (record id, text) of the model's answer after the last tool round trip
        self.reply: list[tuple[str, str]] = []
        self._restart_reply = False
        #: True while the model owes an answer (after the prompt, or a record with tool calls)
        self.awaiting = True
        self.digest: dict[str, list[str]] = {name: [] for name in DIGEST_FIELDS}
        #: the error record that ended the turn: the reply when there is no other
        self.ended_by = ""

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
        if kind == "error":
            self.ended_by = first_line(_text(record.get("content"))) or self.ended_by
            return
        if kind == "user":  # tool results: the model answers them next
            self.awaiting = True
            self._restart_reply = True
            return
        if kind != "gemini":
            return
        stamp = _timestamp(record)
        if stamp:
            self.ended_at = stamp
        calls = record.get("toolCalls")
        calls = [call for call in calls if isinstance(call, dict)] if isinstance(calls, list) else []
        for call in calls:
            self._tool(call)
        said = _text(record.get("content")).strip()
        record_id = record["id"]
        if said:
            if self._restart_reply:
                self.reply = []
                self._restart_reply = False
            if self.reply and self.reply[-1][0] == record_id:
                self.reply[-1] = (record_id, said)  # the same record written again
            else:
                self.reply.append((record_id, said))
        if calls:
            self.awaiting = True
            self._restart_reply = True
        elif said:
            self.awaiting = False

    def _tool(self, call: dict[str, Any]) -> None:
        name = call.get("name")
        args = call.get("args")
        if not isinstance(args, dict):
            args = {}
        if name in EDIT_TOOLS:
            self._note("files_touched", args.get("file_path"))
        elif name in READ_TOOLS:
            self._note("files_read", args.get("file_path"))
        elif name in SHELL_TOOLS:
            command = args.get("command")
            if isinstance(command, str):
                self._note("commands", first_line(command))
        elif name in AGENT_TOOLS:
            self._note("subagents", args.get("agent_name") or args.get("description"))
        if call.get("status") == "error":
            self._note("errors", first_line(_call_error(call)) or f"{name} failed")

    def complete(self, turn_over: bool) -> bool:
        """The model answered last, in text, with no tool call (or the event says the turn is over)."""
        if not self.reply:
            return False
        return turn_over or not self.awaiting

    def as_dict(self) -> dict[str, Any]:
        reply = "\n\n".join(text for _, text in self.reply) or self.ended_by
        return {
            "session_id": self.session_id,
            "turn": self.turn,
            "prompt": self.prompt.replace("\x00", "")[:MAX_TEXT_CHARS],
            "reply": reply.replace("\x00", "")[:MAX_TEXT_CHARS],
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "cwd": None,
            "git_branch": None,
            "digest": {name: list(items) for name, items in self.digest.items()},
        }


def _call_error(call: dict[str, Any]) -> str:
    """The error text of a failed tool call: its display text, else its function response's."""
    display = call.get("resultDisplay")
    if isinstance(display, str) and display.strip():
        return display
    for part in _parts(call.get("result")):
        response = part.get("functionResponse")
        if isinstance(response, dict) and isinstance(response.get("response"), dict):
            error = response["response"].get("error")
            if isinstance(error, str):
                return error
    return ""
