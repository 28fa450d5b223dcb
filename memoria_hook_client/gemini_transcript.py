"""Turn the new part of a Gemini CLI session file (JSONL) into exchanges the capture route stores.

Gemini CLI hands every hook the session file as `transcript_path`
(`~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl`) and appends one JSON object per line:
a header (`sessionId`, `projectHash`, ...), message records (`id`, `timestamp`, `type`: `user`,
`gemini`, `info`, `warning`, `error`; `content` a string or a list of parts; a `gemini` record's
`toolCalls`), and bookkeeping (`{"$set": ...}` metadata updates, `{"$rewindTo": id}`). A record is
written again, whole, under the same `id` when it changes (a `gemini` record first bare, then with
its `toolCalls` and their results), so a later line of the same id replaces the earlier one.

One exchange (`memoria_hook_client.exchange`) is, as for Claude Code (`memoria_hook_client.transcript`,
whose walk and `Delta` this shares): a genuine prompt, the model's final text after the last tool
round trip, and a digest of the tools used on the way. What is particular to Gemini CLI:
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

import re

from memoria_hook_client.exchange import Exchange, Tools, first_line, json_object, kept_text, timestamp
from memoria_hook_client.transcript import Delta, at_prompts, gather, read_with

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HOOK_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>\s*", re.DOTALL)
SESSION_CONTEXT = "<session_context>"

#: Gemini CLI's tool names (0.61.0) and the arguments that name what they touched.
TOOLS = Tools(
    edits=("write_file", "replace"),
    reads=("read_file",),
    shells=("run_shell_command",),
    agents=("invoke_agent",),
    agent_args=("agent_name", "description"),
)


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
    return gather(
        data, offset, turn, final, turn_over, _record, at_prompts(session_id, genuine_prompt, _Exchange)
    )


def _record(raw: bytes) -> dict[str, Any] | None:
    """The message record on one line; None for blank, broken and bookkeeping lines."""
    record = json_object(raw)
    if record is None or not isinstance(record.get("id"), str):
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
    text = kept_text(parts, without_hook_context)
    if not text or text.startswith(SESSION_CONTEXT):
        return None
    return text


class _Exchange(Exchange):
    """A Gemini CLI prompt and the records that followed it: the model's text after the last tool
    round trip (a record written again under its id replaces its text); an error record ends the
    turn (`ended_by`). The records carry no cwd or branch."""

    tools = TOOLS

    def __init__(self, session_id: str, turn: int, offset: int, prompt: str, record: dict[str, Any]):
        super().__init__(session_id, turn, offset, prompt, timestamp(record))

    def add(self, record: dict[str, Any]) -> None:
        kind = record.get("type")
        if kind == "error":
            self.ended_by = first_line(_text(record.get("content"))) or self.ended_by
            return
        if kind == "user":  # tool results: the model answers them next
            self.tool_round()
            return
        if kind != "gemini":
            return
        stamp = timestamp(record)
        if stamp:
            self.ended_at = stamp
        calls = record.get("toolCalls")
        calls = [call for call in calls if isinstance(call, dict)] if isinstance(calls, list) else []
        for call in calls:
            args = call.get("args")
            name = call.get("name")
            self.note_tool(name, args if isinstance(args, dict) else {})
            if call.get("status") == "error":
                self.note("errors", first_line(_call_error(call)) or f"{name} failed")
        said = _text(record.get("content")).strip()
        if said:
            self.answered(said, key=record["id"])  # the same record written again replaces its text
        if calls:
            self.tool_round()


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
