"""Turn the new part of a GitHub Copilot CLI session file (JSONL) into exchanges the capture route stores.

Copilot CLI hands agentStop the session file as `transcriptPath`
(`~/.copilot/session-state/<session id>/events.jsonl`) and appends one event per line (`type`,
`data`, `id`, `parentId`, `timestamp`): `session.start` / `session.resume` (with `context.cwd` and
`context.branch`), `user.message` (`content`: what the person typed; `transformedContent`: what the
model got, hook context included), `assistant.message` (`content` text and `toolRequests`),
`tool.execution_start` / `tool.execution_complete` (`success`, `error`), `hook.start` / `hook.end`,
turn, usage and shutdown bookkeeping. `--continue` and `--resume` append to the same file.

One exchange (`memoria_hook_client.exchange`) is, as for Claude Code (`memoria_hook_client.transcript`,
whose walk and `Delta` this shares): a genuine prompt, the model's final text after the last tool
round trip, and a digest of the tools used on the way. What is particular to Copilot CLI:
- The prompt is `content`, never `transformedContent`: hook context (Memoria's recalled memories)
  goes into the latter's `<system_reminder>`, and sessionStart's only into its `hook.end` event, so
  recalled memories are never captured back as if the person had typed them.
- The model's turn is over when an `assistant.message` has text and no tool request; agentStop
  (`turn_over`) and sessionEnd (`final`) also end it.
- The cwd and branch come from the latest `session.start` / `session.resume` read.

Standard library only, without pathlib or typing at run time: the capture hook imports it.
"""

from __future__ import annotations

from memoria_hook_client.exchange import Exchange, Tools, error_message, json_object, timestamp
from memoria_hook_client.transcript import Delta, gather, read_with

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The events this reader uses; the rest is bookkeeping.
KINDS = ("session.start", "session.resume", "user.message", "assistant.message", "tool.execution_complete")

#: Copilot CLI's tool names (1.0.102) and the arguments that name what they touched.
TOOLS = Tools(
    edits=("create", "edit"),
    reads=("view",),
    shells=("bash",),
    agents=("task",),
    edit_args=("path",),
    read_args=("path",),
    agent_args=("agent_type", "description"),
)


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

    def opens(record: dict[str, Any], _current: Exchange | None, turn: int, at: int) -> Exchange | None:
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
    record = json_object(raw)
    if record is None or record.get("type") not in KINDS:
        return None
    if not isinstance(record.get("data"), dict):
        return None
    return record


def _note_context(record: dict[str, Any], where: dict[str, str | None]) -> None:
    context = record["data"].get("context")
    if not isinstance(context, dict):
        return
    for key in ("cwd", "branch"):
        value = context.get(key)
        if isinstance(value, str) and value:
            where[key] = value


def genuine_prompt(record: dict[str, Any]) -> str | None:
    """What the person typed, when `record` is a prompt; None for everything else."""
    if record.get("type") != "user.message":
        return None
    content = record["data"].get("content")
    if not isinstance(content, str) or not content.strip():
        return None
    return content.strip()


class _Exchange(Exchange):
    """A Copilot CLI prompt and the events that followed it: the model's text after the last tool
    round trip, in the cwd and branch of the latest session event before the prompt."""

    tools = TOOLS

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
        super().__init__(session_id, turn, offset, prompt, timestamp(record), cwd, branch)

    def add(self, record: dict[str, Any]) -> None:
        kind = record["type"]
        data = record["data"]
        if kind == "tool.execution_complete":  # the model answers the results next
            self.tool_round()
            self._result(data)
            return
        if kind != "assistant.message":
            return
        stamp = timestamp(record)
        if stamp:
            self.ended_at = stamp
        requests = data.get("toolRequests")
        calls = [call for call in requests if isinstance(call, dict)] if isinstance(requests, list) else []
        for call in calls:
            if isinstance(call.get("arguments"), dict):
                self.note_tool(call.get("name"), call["arguments"])
        content = data.get("content")
        said = content.strip() if isinstance(content, str) else ""
        if said:
            self.answered(said)
        if calls:
            self.tool_round()

    def _result(self, data: dict[str, Any]) -> None:
        if data.get("success") is False:
            self.note_error(error_message(data.get("error")), "a tool call failed")
