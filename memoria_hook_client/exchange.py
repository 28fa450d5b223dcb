"""One exchange of any agent's session, gathered line by line: what every transcript reader shares.

Each agent writes its session file in a format of its own (`transcript.py` reads Claude Code's,
`codex_transcript.py` Codex's, and so on), but what a reader makes of it is the same: a genuine
prompt, the model's text after its last tool round trip, and a digest of the tools used on the way,
cut to the capture route's limits. `Exchange` holds that and turns it into what the route takes; a
reader's subclass only says which of its agent's records count as what (`add`), and when the turn
is over if not as most agents end it (`complete`). `Tools` names an agent's tools for the digest.
The line walk that feeds an exchange (`gather`, `read_with`, `Delta`) is in `transcript.py`.

Standard library only, without pathlib or typing at run time: the capture hook imports it.
"""

from __future__ import annotations

import json
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

#: The server's limits (contract of `POST /v1/capture/<host>`).
MAX_TEXT_CHARS = 100_000
MAX_DIGEST_ITEMS = 50
MAX_DIGEST_ITEM_CHARS = 500
#: First lines of commands and errors are cut shorter than the server allows: a digest, not a log.
MAX_LINE_CHARS = 300
MAX_CWD_CHARS = 4096
MAX_BRANCH_CHARS = 500
DIGEST_FIELDS = ("files_touched", "files_read", "commands", "errors", "subagents")

_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})\Z")


def json_object(raw: bytes) -> dict[str, Any] | None:
    """The JSON object on one line; None for a blank or broken line, or any other JSON value (one
    bad line must not stop capture of the rest)."""
    if not raw.strip():
        return None
    try:
        value = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def timestamp(record: dict[str, Any]) -> str | None:
    """The record's RFC 3339 `timestamp`; None for anything else (the server would refuse the batch)."""
    value = record.get("timestamp")
    return value if isinstance(value, str) and _RFC3339.match(value) else None


def first_line(text: str, limit: int = MAX_LINE_CHARS) -> str:
    """The first non-blank line of `text`, cut to `limit` characters."""
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def blocks_text(blocks: Any, kinds: tuple[str, ...]) -> str:
    """The `text` of the blocks of the list `blocks` whose `type` is one of `kinds`, a line between
    them; empty for anything but a list."""
    if not isinstance(blocks, list):
        return ""
    return "\n".join(
        block["text"]
        for block in blocks
        if isinstance(block, dict) and block.get("type") in kinds and isinstance(block.get("text"), str)
    )


def kept_text(parts: list[dict[str, Any]], without: Callable[[str], str]) -> str:
    """The text parts of a prompt, each `without` what hooks added to it, the emptied ones left out."""
    texts = [without(part["text"]) for part in parts if isinstance(part.get("text"), str)]
    return "\n".join(kept for kept in texts if kept)


def error_message(error: Any) -> Any:
    """A tool result's error: its `message` when it is an object, else itself."""
    return error.get("message") if isinstance(error, dict) else error


class Tools:
    """An agent's tool names, by what the digest notes of a call to them (files edited, files read,
    shell commands, subagents), and the arguments that name what the call touched (the first of
    them that is set). A shell tool's is `command`."""

    __slots__ = ("agent_args", "agents", "edit_args", "edits", "read_args", "reads", "shells")

    def __init__(
        self,
        *,
        edits: tuple[str, ...],
        reads: tuple[str, ...],
        shells: tuple[str, ...],
        agents: tuple[str, ...],
        edit_args: tuple[str, ...] = ("file_path",),
        read_args: tuple[str, ...] = ("file_path",),
        agent_args: tuple[str, ...] = ("subagent_type", "description"),
    ):
        self.edits = edits
        self.reads = reads
        self.shells = shells
        self.agents = agents
        self.edit_args = edit_args
        self.read_args = read_args
        self.agent_args = agent_args


def _first_set(args: dict[str, Any], keys: tuple[str, ...]) -> Any:
    """`args[keys[0]] or args[keys[1]] or ...` (missing keys None)."""
    value = None
    for key in keys:
        value = args.get(key)
        if value:
            break
    return value


class Exchange:
    """One prompt and what followed it, being gathered line by line (`transcript.gather`)."""

    #: the agent's tools, for `note_tool`
    tools: Tools

    def __init__(
        self,
        session_id: str,
        turn: int,
        offset: int,
        prompt: str,
        started_at: str | None,
        cwd: str | None = None,
        git_branch: str | None = None,
    ):
        self.session_id = session_id
        self.turn = turn
        #: where the prompt's line starts: the cursor while the exchange is pending
        self.offset = offset
        self.prompt = prompt
        self.started_at = started_at
        self.ended_at = started_at
        self.cwd = cwd
        self.git_branch = git_branch
        #: the model's text after its last tool round trip
        self.reply: list[str] = []
        #: a tool round trip came since the last text: the next text starts the reply anew
        self._restart_reply = False
        self._reply_key: object = None
        #: True while the model owes an answer (after the prompt, a tool call or a tool result)
        self.awaiting = True
        self.digest: dict[str, list[str]] = {name: [] for name in DIGEST_FIELDS}
        #: the error or interruption that ended the turn: the reply when there is no other
        self.ended_by = ""

    def add(self, record: dict[str, Any]) -> None:
        """Take in a record that came after the prompt (the reader's own format)."""
        raise NotImplementedError

    def answered(self, text: str, key: object = None) -> None:
        """The model said `text`: part of the reply, or its start after a tool round trip. A record
        written again whole under the same `key` (not None) replaces its earlier text."""
        if self._restart_reply:
            self.reply = []
            self._restart_reply = False
        if key is not None and self.reply and key == self._reply_key:
            self.reply[-1] = text
        else:
            self.reply.append(text)
        self._reply_key = key
        self.awaiting = False

    def tool_round(self) -> None:
        """The model called tools, or their results came back: it owes an answer, and its next text
        is a new reply."""
        self.awaiting = True
        self._restart_reply = True

    def note(self, field: str, value: Any, limit: int = MAX_DIGEST_ITEM_CHARS) -> None:
        """Add `value` to the digest's `field`: a non-empty string, cut to `limit`, once, while there
        is room."""
        if not isinstance(value, str):
            return
        value = value.replace("\x00", "").strip()
        if not value:
            return
        if len(value) > limit:
            value = value[: limit - 1] + "…"
        items = self.digest[field]
        if value not in items and len(items) < MAX_DIGEST_ITEMS:
            items.append(value)

    def note_error(self, said: Any, otherwise: str) -> None:
        """A failed tool call: the first line of what it `said`, `otherwise` when that is no text."""
        self.note("errors", first_line(said) if isinstance(said, str) else otherwise)

    def note_tool(self, name: Any, args: dict[str, Any]) -> None:
        """A call of the tool `name` with `args`, in the digest by what `tools` says it does."""
        tools = self.tools
        if name in tools.edits:
            self.note("files_touched", _first_set(args, tools.edit_args))
        elif name in tools.reads:
            self.note("files_read", _first_set(args, tools.read_args))
        elif name in tools.shells:
            command = args.get("command")
            if isinstance(command, str):
                self.note("commands", first_line(command))
        elif name in tools.agents:
            self.note("subagents", _first_set(args, tools.agent_args))

    def complete(self, turn_over: bool) -> bool:
        """The model answered last, in text, with no tool call (or the event says the turn is over)."""
        if not self.reply:
            return False
        return turn_over or not self.awaiting

    def as_dict(self) -> dict[str, Any]:
        """The exchange as the capture route takes it."""
        return {
            "session_id": self.session_id,
            "turn": self.turn,
            # NUL: PostgreSQL text cannot hold it, and nobody meant it
            "prompt": self.prompt.replace("\x00", "")[:MAX_TEXT_CHARS],
            "reply": ("\n\n".join(self.reply) or self.ended_by).replace("\x00", "")[:MAX_TEXT_CHARS],
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "cwd": None if self.cwd is None else self.cwd[:MAX_CWD_CHARS],
            "git_branch": None if self.git_branch is None else self.git_branch[:MAX_BRANCH_CHARS],
            "digest": {name: list(items) for name, items in self.digest.items()},
        }
