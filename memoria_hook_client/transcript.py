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

This module also holds the line walk every agent's reader shares (`read_with`, `gather`, `Delta`);
the exchange they gather is `memoria_hook_client.exchange.Exchange`.

Standard library only, without pathlib or typing at run time: the capture hook imports it.
"""

from __future__ import annotations

from memoria_hook_client.exchange import MAX_DIGEST_ITEM_CHARS as MAX_DIGEST_ITEM_CHARS
from memoria_hook_client.exchange import MAX_DIGEST_ITEMS as MAX_DIGEST_ITEMS
from memoria_hook_client.exchange import MAX_LINE_CHARS as MAX_LINE_CHARS
from memoria_hook_client.exchange import MAX_TEXT_CHARS as MAX_TEXT_CHARS
from memoria_hook_client.exchange import Exchange, Tools, blocks_text, first_line, json_object, timestamp

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

#: A read takes at most this much of the transcript (a first capture of a long session, say); the
#: rest follows on the next run, so one run stays well inside the hook's time budget.
MAX_READ_BYTES = 16 * 1024 * 1024

TOOLS = Tools(
    edits=("Edit", "Write", "MultiEdit", "NotebookEdit"),
    reads=("Read",),
    shells=("Bash",),
    agents=("Task", "Agent"),
    edit_args=("file_path", "notebook_path"),
    agent_args=("description", "subagent_type"),
)
#: Stop reasons after which the model does not continue the turn on its own.
END_REASONS = ("end_turn", "stop_sequence", "max_tokens", "refusal")

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

    return gather(
        data, offset, turn, final, turn_over, _entry, at_prompts(session_id, genuine_prompt, _Exchange)
    )


def gather(
    data: bytes,
    offset: int,
    turn: int,
    final: bool,
    turn_over: bool,
    entry_of: Callable[[bytes], dict[str, Any] | None],
    opens: Callable[[dict[str, Any], Exchange | None, int, int], Exchange | None],
) -> Delta:
    """The line walk every agent's session file shares. Only whole lines are read (a partial last
    line waits); `entry_of` reads a line (None: not a record); `opens(entry, current, turn, line
    offset)` is the exchange a prompt entry begins, None when the entry belongs to the current one.
    An exchange holding neither prompt text nor a reply is left out. The last exchange stays pending
    (the cursor at its prompt line) until `complete`, unless `final`."""
    end = data.rfind(b"\n") + 1
    exchanges: list[dict[str, Any]] = []
    current: Exchange | None = None
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


def at_prompts(
    session_id: str,
    prompt_of: Callable[[dict[str, Any]], str | None],
    exchange: Callable[[str, int, int, str, dict[str, Any]], Exchange],
) -> Callable[[dict[str, Any], Exchange | None, int, int], Exchange | None]:
    """`gather`'s `opens` for a reader whose every prompt begins an exchange: `prompt_of(entry)` is
    the prompt's text (None: no prompt), `exchange(session_id, turn, offset, prompt, entry)` the
    exchange it begins."""

    def opens(entry: dict[str, Any], _current: Exchange | None, turn: int, at: int) -> Exchange | None:
        prompt = prompt_of(entry)
        return None if prompt is None else exchange(session_id, turn, at, prompt, entry)

    return opens


def _entry(raw: bytes) -> dict[str, Any] | None:
    """The entry on one line, None for blank, broken or sidechain lines."""
    entry = json_object(raw)
    return None if entry is None or entry.get("isSidechain") is True else entry


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
    return content if isinstance(content, str) else blocks_text(content, ("text",))


class _Exchange(Exchange):
    """A Claude Code prompt and what followed it: text blocks of the assistant's answer after the
    last tool round trip; an API error or interruption marker ends the turn (`ended_by`)."""

    tools = TOOLS

    def __init__(self, session_id: str, turn: int, offset: int, prompt: str, entry: dict[str, Any]):
        cwd = entry.get("cwd")
        branch = entry.get("gitBranch")
        super().__init__(
            session_id,
            turn,
            offset,
            prompt,
            timestamp(entry),
            cwd if isinstance(cwd, str) and cwd else None,
            branch if isinstance(branch, str) and branch else None,
        )
        #: the stop reason of the last assistant entry (None while a message is written block by block)
        self.last_stop: Any = None

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
        stamp = timestamp(entry)
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
                    self.tool_round()
                    if block.get("is_error") is True:
                        self.note("errors", first_line(_text_of(block.get("content"))))
            return
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                self.answered(block["text"])
            elif block.get("type") == "tool_use":
                self.awaiting = True
                if isinstance(block.get("input"), dict):
                    self.note_tool(block.get("name"), block["input"])

    def complete(self, turn_over: bool) -> bool:
        """The model answered last, in text, and that message ended the turn (or the event says the
        turn is over); a later prompt also ends it. Until then the exchange waits: a text block
        written before the same message's tool_use must not be taken for the final reply."""
        if self.awaiting or not self.reply:
            return False
        return self.last_stop in END_REASONS or (self.last_stop is None and turn_over)


def _emit(current: Exchange, exchanges: list[dict[str, Any]]) -> None:
    """Add `current` unless it holds nothing to remember (no prompt text and no reply)."""
    if current.prompt.strip() or current.reply:
        exchanges.append(current.as_dict())
