"""Turn the new part of a Claude Code transcript (JSONL) into exchanges the capture route stores.

Claude Code appends one JSON object per line to `transcript_path`: `user` entries (a typed prompt,
or the carrier of `tool_result` blocks), `assistant` entries (text, thinking and `tool_use` blocks,
often one entry per block of the same message), and bookkeeping (`attachment`, `system`,
`summary`, `queue-operation`, `file-history-snapshot`, `last-prompt`, ...). One exchange is a
genuine prompt plus the assistant's final text reply to it, and a digest of the tools used on the
way; tool inputs and outputs are not stored verbatim (they are long, change, and would bury the
conversation in recall).

Deliberate choices:
- Sidechain entries (`isSidechain`: a subagent's own conversation) are skipped; the main thread's
  Task/Agent call shows up in the digest as a subagent.
- Compact summaries (`isCompactSummary` user entries) and `compact_boundary` system entries are
  skipped and are not turns: the summary repeats what was captured already.
- Meta entries (`isMeta`), slash-command and local-command wrappers (`<command-name>`,
  `<local-command-stdout>`, ...) and "[Request interrupted by user]" markers are not prompts.
- The turn index counts genuine prompts from the start of the transcript, so the server's capture
  key (session, turn, chunk) is the same whenever the same lines are read again.
- Only whole lines are read: a partial last line waits for the next run. The last exchange stays
  pending (the cursor stays at its prompt line) until its reply has arrived, unless `final` (the
  SessionEnd event: store what there is).

Standard library only, without pathlib or typing at run time: the capture hook imports it.
"""

from __future__ import annotations

import json
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Protocol

    class Gathered(Protocol):
        """An exchange being gathered line by line, of any agent's session file."""

        @property
        def turn(self) -> int: ...
        @property
        def offset(self) -> int: ...
        @property
        def prompt(self) -> str: ...
        @property
        def reply(self) -> object: ...  # anything empty when there is none yet
        def add(self, entry: dict[str, Any]) -> None: ...
        def complete(self, turn_over: bool) -> bool: ...
        def as_dict(self) -> dict[str, Any]: ...


#: A read takes at most this much of the transcript (a first capture of a long session, say); the
#: rest follows on the next run, so one run stays well inside the hook's time budget.
MAX_READ_BYTES = 16 * 1024 * 1024
#: The server's limits (contract of `POST /v1/capture/claude-code`).
MAX_TEXT_CHARS = 100_000
MAX_DIGEST_ITEMS = 50
MAX_DIGEST_ITEM_CHARS = 500
#: First lines of commands and errors are cut shorter than the server allows: a digest, not a log.
MAX_LINE_CHARS = 300

MAX_CWD_CHARS = 4096
MAX_BRANCH_CHARS = 500
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})\Z")

EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")
READ_TOOLS = ("Read",)
SHELL_TOOLS = ("Bash",)
AGENT_TOOLS = ("Task", "Agent")
#: Stop reasons after which the model does not continue the turn on its own.
END_REASONS = ("end_turn", "stop_sequence", "max_tokens", "refusal")
DIGEST_FIELDS = ("files_touched", "files_read", "commands", "errors", "subagents")

#: Text a user entry starts with when Claude Code wrote it for a slash command, a `!` shell
#: command or a local command's output, not the person typing a prompt.
META_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<user-memory-input>",
    "[Request interrupted by user",
)


class Delta:
    """What one read produced: the finished exchanges and where the next read starts."""

    __slots__ = ("exchanges", "lines", "offset", "pending", "turn")

    def __init__(self, exchanges: list[dict[str, Any]], offset: int, turn: int, lines: int, pending: bool):
        self.exchanges = exchanges
        self.offset = offset
        self.turn = turn
        self.lines = lines
        self.pending = pending


def read_delta(
    path: str, offset: int, turn: int, session_id: str, final: bool = False, turn_over: bool = False
) -> Delta:
    """The exchanges in `path` from byte `offset` on, `turn` being the number of prompts before it.

    OSError when the transcript cannot be read. When the file is shorter than `offset` (replaced,
    not appended to) reading starts again from the top, and the server's capture keys make the
    repeated turns duplicates."""
    return read_with(parse_delta, path, offset, turn, session_id, final, turn_over)


def read_with(
    parse: Callable[[bytes, int, int, str, bool, bool], Delta],
    path: str,
    offset: int,
    turn: int,
    session_id: str,
    final: bool = False,
    turn_over: bool = False,
) -> Delta:
    """`read_delta` for any agent's JSONL session file, whose lines `parse` turns into a Delta
    (`parse_delta`'s signature): the reading, the restart and the growing read are the same."""
    with open(path, "rb") as file:
        file.seek(0, 2)
        size = file.tell()
        if offset > size:
            offset, turn = 0, 0
        limit = -1 if final else MAX_READ_BYTES  # SessionEnd is the last chance: all of it
        while True:
            file.seek(offset)
            data = file.read(limit)
            truncated = offset + len(data) < size
            delta = parse(data, offset, turn, session_id, final, turn_over and not truncated)
            if not (truncated and delta.pending and delta.offset == offset):
                break
            limit *= 2  # one turn larger than a read (huge tool outputs): it must still move on
    return delta


def parse_delta(
    data: bytes, offset: int, turn: int, session_id: str, final: bool = False, turn_over: bool = False
) -> Delta:
    """`read_delta` on bytes already read from `offset`. `final`: store the last exchange whatever
    state it is in (SessionEnd); `turn_over`: the event says the turn ended (Stop), so a last text
    reply without a stop reason (a message Claude Code wrote block by block) is the final one."""

    def opens(entry: dict[str, Any], _current: Gathered | None, turn: int, at: int) -> Gathered | None:
        prompt = genuine_prompt(entry)
        return None if prompt is None else _Exchange(session_id, turn, at, prompt, entry)

    return gather(data, offset, turn, final, turn_over, _entry, opens)


def gather(
    data: bytes,
    offset: int,
    turn: int,
    final: bool,
    turn_over: bool,
    entry_of: Callable[[bytes], dict[str, Any] | None],
    opens: Callable[[dict[str, Any], Gathered | None, int, int], Gathered | None],
) -> Delta:
    """The line walk every agent's session file shares. Only whole lines are read (a partial last
    line waits); `entry_of` reads a line (None: not a record); `opens(entry, current, turn, line
    offset)` is the exchange a prompt entry begins, None when the entry belongs to the current one.
    An exchange holding neither prompt text nor a reply is left out. The last exchange stays pending
    (the cursor at its prompt line) until `complete`, unless `final`."""
    end = data.rfind(b"\n") + 1
    exchanges: list[dict[str, Any]] = []
    current: Gathered | None = None
    position = 0
    lines = 0
    while position < end:
        stop = data.index(b"\n", position) + 1
        line_offset = offset + position
        entry = entry_of(data[position:stop])
        position = stop
        lines += 1
        if entry is None:
            continue
        opened = opens(entry, current, turn, line_offset)
        if opened is not None:
            if current is not None:
                _emit(current, exchanges)
            current = opened
            turn += 1
        elif current is not None:
            current.add(entry)
    if current is None:
        return Delta(exchanges, offset + end, turn, lines, False)
    if final or current.complete(turn_over):
        _emit(current, exchanges)
        return Delta(exchanges, offset + end, turn, lines, False)
    return Delta(exchanges, current.offset, current.turn, lines, True)


def _entry(raw: bytes) -> dict[str, Any] | None:
    """The entry on one line, None for blank, broken or sidechain lines."""
    if not raw.strip():
        return None
    try:
        entry = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        return None  # one bad line must not stop capture of the rest
    if not isinstance(entry, dict) or entry.get("isSidechain") is True:
        return None
    return entry


def genuine_prompt(entry: dict[str, Any]) -> str | None:
    """The text a person typed, when `entry` is a prompt; None for everything else."""
    if entry.get("type") != "user" or entry.get("isMeta") or entry.get("isCompactSummary"):
        return None
    if entry.get("isVisibleInTranscriptOnly") or entry.get("toolUseResult") is not None:
        return None
    message = entry.get("message")
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "tool_result":
                return None
            if kind == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
        if not parts and not content:
            return None
        text = "\n".join(parts)
    else:
        return None
    if text.lstrip().startswith(META_PREFIXES):
        return None
    return text


def _text_of(content: Any) -> str:
    """The text in a tool_result's content (a string or a list of text blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            block["text"]
            for block in content
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
        )
    return ""


def first_line(text: str, limit: int = MAX_LINE_CHARS) -> str:
    """The first non-blank line of `text`, cut to `limit` characters."""
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def _timestamp(entry: dict[str, Any]) -> str | None:
    """The entry's RFC 3339 timestamp; None for anything else (the server would refuse the batch)."""
    value = entry.get("timestamp")
    return value if isinstance(value, str) and _RFC3339.match(value) else None


class _Exchange:
    """One prompt and what followed it, being gathered line by line."""

    def __init__(self, session_id: str, turn: int, offset: int, prompt: str, entry: dict[str, Any]):
        self.session_id = session_id
        self.turn = turn
        self.offset = offset
        self.prompt = prompt
        self.started_at = _timestamp(entry)
        self.ended_at = self.started_at
        cwd = entry.get("cwd")
        branch = entry.get("gitBranch")
        self.cwd = cwd if isinstance(cwd, str) and cwd else None
        self.git_branch = branch if isinstance(branch, str) and branch else None
        #: text blocks of the assistant's answer after the last tool round trip
        self.reply: list[str] = []
        self._restart_reply = False
        #: True while the model owes an answer (after the prompt, a tool_use or a tool_result)
        self.awaiting = True
        #: the stop reason of the last assistant entry (None while a message is written block by block)
        self.last_stop: Any = None
        self.digest: dict[str, list[str]] = {name: [] for name in DIGEST_FIELDS}
        #: the API error or interruption marker that ended the turn: the reply when there is no other
        self.ended_by = ""

    def _note(self, field: str, value: Any, limit: int = MAX_DIGEST_ITEM_CHARS) -> None:
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

    def add(self, entry: dict[str, Any]) -> None:
        kind = entry.get("type")
        if kind not in ("user", "assistant") or entry.get("isCompactSummary"):
            return
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            return
        if kind == "assistant" and entry.get("isApiErrorMessage"):
            self.ended_by = first_line(_text_of(content)) or self.ended_by  # the server skips it (#35)
            return
        stamp = _timestamp(entry)
        if stamp:
            self.ended_at = stamp
        if kind == "assistant":
            self.last_stop = message.get("stop_reason") if isinstance(message, dict) else None
        if kind == "user":
            said = _text_of(content).lstrip()
            if said.startswith("[Request interrupted by user"):  # the server skips it (#35)
                self.ended_by = first_line(said)
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    self.awaiting = True
                    self._restart_reply = True
                    if block.get("is_error") is True:
                        self._note("errors", first_line(_text_of(block.get("content"))))
            return
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                if self._restart_reply:
                    self.reply = []
                    self._restart_reply = False
                self.reply.append(block["text"])
                self.awaiting = False
            elif block.get("type") == "tool_use":
                self.awaiting = True
                self._tool(block)

    def _tool(self, block: dict[str, Any]) -> None:
        name = block.get("name")
        tool_input = block.get("input")
        if not isinstance(tool_input, dict):
            return
        if name in EDIT_TOOLS:
            self._note("files_touched", tool_input.get("file_path") or tool_input.get("notebook_path"))
        elif name in READ_TOOLS:
            self._note("files_read", tool_input.get("file_path"))
        elif name in SHELL_TOOLS:
            command = tool_input.get("command")
            if isinstance(command, str):
                self._note("commands", first_line(command))
        elif name in AGENT_TOOLS:
            self._note("subagents", tool_input.get("description") or tool_input.get("subagent_type"))

    def complete(self, turn_over: bool) -> bool:
        """The model answered last, in text, and that message ended the turn (or the event says the
        turn is over); a later prompt also ends it. Until then the exchange waits: a text block
        written before the same message's tool_use must not be taken for the final reply."""
        if self.awaiting or not self.reply:
            return False
        return self.last_stop in END_REASONS or (self.last_stop is None and turn_over)

    def as_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "turn": self.turn,
            # NUL: PostgreSQL text cannot hold it, and nobody meant it
            "prompt": self.prompt.replace("\x00", "")[:MAX_TEXT_CHARS],
            "reply": ("\n\n".join(self.reply) or self.ended_by).replace("\x00", "")[:MAX_TEXT_CHARS],
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "cwd": self.cwd[:MAX_CWD_CHARS] if self.cwd else None,
            "git_branch": self.git_branch[:MAX_BRANCH_CHARS] if self.git_branch else None,
            "digest": {name: list(items) for name, items in self.digest.items()},
        }


def _emit(current: Gathered, exchanges: list[dict[str, Any]]) -> None:
    """Add `current` unless it holds nothing to remember (no prompt text and no reply)."""
    if current.prompt.strip() or current.reply:
        exchanges.append(current.as_dict())
