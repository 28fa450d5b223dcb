"""Turn the new part of a GitHub Copilot CLI session file (JSONL) into exchanges the capture route stores.

Copilot CLI hands agentStop the session file as `transcriptPath`
(`~/.copilot/session-state/<session id>/events.jsonl`) and appends one event per line (`type`,
`data`, `id`, `parentId`, `timestamp`): `session.start` / `session.resume` (with `context.cwd` and
`context.branch`), `user.message` (`content`: what the person typed; `transformedContent`: what the
model got, hook context included), `assistant.message` (`content` text and `toolRequests`),
`tool.execution_start` / `tool.execution_complete` (`success`, `error`), `hook.start` / `hook.end`,
turn, usage and shutdown bookkeeping. `--continue` and `--resume` append to the same file.

One exchange is, as for Claude Code (`memoria_hook_client.transcript`, whose walk, `Delta` and limits
this shares): a genuine prompt, the model's final text after the last tool round trip, and a digest
of the tools used on the way. What is particular to Copilot CLI:
- The prompt is `content`, never `transformedContent`: hook context (Memoria's recalled memories)
  goes into the latter's `<system_reminder>`, and sessionStart's only into its `hook.end` event, so
  recalled memories are never captured back as if the person had typed them.
- The model's turn is over when an `assistant.message` has text and no tool request; agentStop
  (`turn_over`) and sessionEnd (`final`) also end it.
- The cwd and branch come from the latest `session.start` / `session.resume` read.

Standard library only, without pathlib or typing at run time: the capture hook imports it.
"""

from __future__ import annotations

import json
import re

from memoria_hook_client.transcript import (
    DIGEST_FIELDS,
    MAX_BRANCH_CHARS,
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

_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})\Z")
#: The events this reader uses; the rest is bookkeeping.
KINDS = ("session.start", "session.resume", "user.message", "assistant.message", "tool.execution_complete")

#: Copilot CLI's tool names (1.0.102) and the argument that names what they touched.
EDIT_TOOLS = ("create", "edit")
READ_TOOLS = ("view",)
SHELL_TOOLS = ("bash",)
AGENT_TOOLS = ("task",)


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
    where: dict[str, str | None] = {"cwd": None, "branch": None}

    def opens(record: dict[str, Any], _current: Gathered | None, turn: int, at: int) -> Gathered | None:
        if record["type"] in ("session.start", "session.resume"):
            _note_context(record, where)
            return None
        prompt = genuine_prompt(record)
        if prompt is None:
            return None
        return _Exchange(session_id, turn, at, prompt, record, where["cwd"], where["branch"])

    return gather(data, offset, turn, final, turn_over, _record, opens)


def _record(raw: bytes) -> dict[str, Any] | None:
    """The event on one line; None for blank, broken and bookkeeping lines."""
    if not raw.strip():
        return None
    try:
        record = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        return None  # one bad line must not stop capture of the rest
    if not isinstance(record, dict) or record.get("type") not in KINDS:
        return None
    if not isinstance(record.get("data"), dict):
        return None
    return record


def _note_context(record: dict[str, Any], where: dict[str, str | None]) -> None:
    context = record["data"].get("context")
    if not isinstance(context, dict):
        return
    for key, limit in (("cwd", MAX_CWD_CHARS), ("branch", MAX_BRANCH_CHARS)):
        value = context.get(key)
        if isinstance(value, str) and value:
            where[key] = value[:limit]


def genuine_prompt(record: dict[str, Any]) -> str | None:
    """What the person typed, when `record` is a prompt; None for everything else."""
    if record.get("type") != "user.message":
        return None
    content = record["data"].get("content")
    if not isinstance(content, str) or not content.strip():
        return None
    return content.strip()


def _timestamp(record: dict[str, Any]) -> str | None:
    value = record.get("timestamp")
    return value if isinstance(value, str) and _RFC3339.match(value) else None


class _Exchange:
    """One prompt and the events that followed it, gathered line by line."""

    def __init__(
        self,
        session_id: str,
        turn: int,
        offset: int,
        prompt: str,
        record: dict[str, Any],
        cwd: str | None,
        branch: str | None,
    ):
        self.session_id = session_id
        self.turn = turn
        self.offset = offset
        self.prompt = prompt
        self.started_at = _timestamp(record)
        self.ended_at = self.started_at
        self.cwd = cwd
        self.branch = branch
        #: the model's text after the last tool round trip
        self.reply: list[str] = []
        self._restart_reply = False
        #: True while the model owes an answer (after the prompt, or a message with tool requests)
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
        kind = record["type"]
        data = record["data"]
        if kind == "tool.execution_complete":  # the model answers the results next
            self.awaiting = True
            self._restart_reply = True
            self._result(data)
            return
        if kind != "assistant.message":
            return
        stamp = _timestamp(record)
        if stamp:
            self.ended_at = stamp
        requests = data.get("toolRequests")
        calls = [call for call in requests if isinstance(call, dict)] if isinstance(requests, list) else []
        for call in calls:
            self._tool(call)
        content = data.get("content")
        said = content.strip() if isinstance(content, str) else ""
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
        args = call.get("arguments")
        if not isinstance(args, dict):
            return
        if name in EDIT_TOOLS:
            self._note("files_touched", args.get("path"))
        elif name in READ_TOOLS:
            self._note("files_read", args.get("path"))
        elif name in SHELL_TOOLS:
            command = args.get("command")
            if isinstance(command, str):
                self._note("commands", first_line(command))
        elif name in AGENT_TOOLS:
            self._note("subagents", args.get("agent_type") or args.get("description"))

    def _result(self, data: dict[str, Any]) -> None:
        if data.get("success") is not False:
            return
        error = data.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        self._note("errors", first_line(message) if isinstance(message, str) else "a tool call failed")

    def complete(self, turn_over: bool) -> bool:
        """The model answered last, in text, with no tool request (or the event says the turn is over)."""
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
            "git_branch": self.branch,
            "digest": {name: list(items) for name, items in self.digest.items()},
        }
