"""Turn the new part of a Qwen Code session file (JSONL) into exchanges the capture route stores.

Qwen Code hands every hook the session file as `transcript_path`
(`~/.qwen/projects/<cwd with / as ->/chats/<session id>.jsonl`) and appends one record per line
(`uuid`, `parentUuid`, `sessionId`, `timestamp`, `type`, `cwd`, `provenance`, and for messages a
Gemini-style `message` with `parts`): `user` (a prompt; typed ones carry `provenance: real_user`
and `systemPayload.displayText`, what the person typed), `assistant` (`text` parts, `thought`
parts, `functionCall` parts), `tool_result` (`functionResponse` parts and `toolCallResult` with its
`status` and `error`), and `system` bookkeeping (telemetry, attribution snapshots, slash commands).
`--continue` and `--resume` append to the same file.

One exchange (`memoria_hook_client.exchange`) is, as for Claude Code (`memoria_hook_client.transcript`,
whose walk and `Delta` this shares): a genuine prompt, the model's final text after the last tool
round trip, and a digest of the tools used on the way. What is particular to Qwen Code:
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

import re

from memoria_hook_client.exchange import Exchange, Tools, error_message, json_object, kept_text, timestamp
from memoria_hook_client.transcript import Delta, at_prompts, gather, read_with

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: A hook's context as Qwen Code 0.24.4 adds it to the prompt's record (`<` and `>` of the context escaped).
HOOK_CONTEXT = re.compile(r"<qwen:[a-z-]+-context>.*?</qwen:[a-z-]+-context>\s*", re.DOTALL)
#: Who a typed prompt comes from (older releases write no provenance).
PERSON = (None, "real_user")

#: Qwen Code's tool names (0.24.4); the arguments that name what they touched are the defaults.
TOOLS = Tools(
    edits=("write_file", "edit"), reads=("read_file",), shells=("run_shell_command",), agents=("agent",)
)


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
    return gather(
        data, offset, turn, final, turn_over, _record, at_prompts(session_id, genuine_prompt, _Exchange)
    )


def _record(raw: bytes) -> dict[str, Any] | None:
    """The message record on one line; None for blank, broken and bookkeeping lines."""
    record = json_object(raw)
    if record is None or record.get("type") not in ("user", "assistant", "tool_result"):
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
    return kept_text(parts, without_hook_context) or None


class _Exchange(Exchange):
    """A Qwen Code prompt and the records that followed it: the model's text parts after the last
    tool round trip. Records name their cwd, not the branch."""

    tools = TOOLS

    def __init__(self, session_id: str, turn: int, offset: int, prompt: str, record: dict[str, Any]):
        cwd = record.get("cwd")
        super().__init__(
            session_id, turn, offset, prompt, timestamp(record), cwd if isinstance(cwd, str) and cwd else None
        )

    def add(self, record: dict[str, Any]) -> None:
        kind = record.get("type")
        if kind == "tool_result":  # the model answers the results next
            self.tool_round()
            self._result(record)
            return
        if kind != "assistant":
            return  # a message typed while tools ran goes to the model with their results
        stamp = timestamp(record)
        if stamp:
            self.ended_at = stamp
        parts = _parts(record)
        calls = [part["functionCall"] for part in parts if isinstance(part.get("functionCall"), dict)]
        for call in calls:
            if isinstance(call.get("args"), dict):
                self.note_tool(call.get("name"), call["args"])
        said = "".join(
            part["text"] for part in parts if isinstance(part.get("text"), str) and not part.get("thought")
        ).strip()
        if said:
            self.answered(said)
        if calls:
            self.tool_round()

    def _result(self, record: dict[str, Any]) -> None:
        result = record.get("toolCallResult")
        if not isinstance(result, dict) or result.get("status") != "error":
            return
        message = error_message(result.get("error"))
        display = result.get("resultDisplay")
        said = message if isinstance(message, str) and message.strip() else display
        self.note_error(said, "a tool call failed")
