"""A session's transcript, appended turn by turn in the JSONL shape Claude Code 2.1 writes
(tests/fixtures/transcripts/ holds recorded ones): the capture hook reads it exactly as it reads a
real session's, so its skip rules and folding see what they would see in use.

What goes in per turn: the queued prompt, the `user` entry, the hook's injected context as an
`attachment` (Claude Code keeps it in the transcript; capture must not store it back), then either
the tool round trips and the final text reply, or the way the turn ended instead: an API error
entry (`isApiErrorMessage`, model `<synthetic>`), a refused tool call (the rejection `tool_result`
and `[Request interrupted by user for tool use]`) or `[Request interrupted by user]`. A `/compact`
writes its command entries, the compact boundary and the summary.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memoria_bench.usage.scenario import Tool, Turn

VERSION = "2.1.197"
MODEL = "claude-opus-4-8"
REFUSAL = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a "
    "file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the "
    "user to tell you how to proceed."
)


def _stamp() -> str:
    """Now, as Claude Code stamps entries: the replay runs in real time, so episodes are dated in
    the order the scenario's sessions happen."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class TranscriptWriter:
    """Appends one session's entries to its `<session_id>.jsonl`."""

    def __init__(self, path: Path, session_id: str, cwd: str) -> None:
        self.path = path
        self.session_id = session_id
        self.cwd = cwd
        self.parent: str | None = None
        self._messages = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()

    def _write(self, *entries: dict[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as out:
            for entry in entries:
                out.write(json.dumps(entry, separators=(",", ":")) + "\n")

    def _entry(self, body: dict[str, Any]) -> dict[str, Any]:
        uid = str(uuid.uuid4())
        entry = {
            "parentUuid": self.parent,
            "isSidechain": False,
            **body,
            "uuid": uid,
            "timestamp": _stamp(),
            "userType": "external",
            "entrypoint": "cli",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": VERSION,
            "gitBranch": "main",
        }
        self.parent = uid
        return entry

    def _assistant(self, content: list[dict[str, Any]], stop_reason: str, **extra: Any) -> dict[str, Any]:
        self._messages += 1
        message = {
            "id": f"msg_bench_{self._messages:04d}",
            "type": "message",
            "role": "assistant",
            "model": extra.pop("model", MODEL),
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 10},
        }
        return self._entry({"message": message, "type": "assistant", **extra})

    def prompt(self, text: str) -> str:
        """The typed prompt; its prompt id (the hook event carries the same)."""
        prompt_id = str(uuid.uuid4())
        self._write(
            {
                "type": "queue-operation",
                "operation": "enqueue",
                "content": text,
                "sessionId": self.session_id,
            },
            {"type": "queue-operation", "operation": "dequeue", "sessionId": self.session_id},
            self._entry(
                {
                    "promptId": prompt_id,
                    "type": "user",
                    "message": {"role": "user", "content": text},
                    "permissionMode": "default",
                }
            ),
        )
        return prompt_id

    def injected(self, context: str, event: str) -> None:
        """The context a hook added, as the attachment Claude Code records it."""
        if context:
            attachment = {"type": "hook_additional_context", "content": [context], "hookName": event}
            self._write(self._entry({"attachment": attachment, "type": "attachment"}))

    def _tool_round_trip(self, prompt_id: str, tool: Tool, number: int, result: str, is_error: bool) -> str:
        tool_id = f"toolu_bench_{self._messages + 1:04d}_{number}"
        use = {"type": "tool_use", "id": tool_id, "name": tool.name, "input": tool.input}
        block = {"tool_use_id": tool_id, "type": "tool_result", "content": result, "is_error": is_error}
        self._write(
            self._assistant([use], "tool_use"),
            self._entry(
                {
                    "promptId": prompt_id,
                    "type": "user",
                    "message": {"role": "user", "content": [block]},
                    "toolUseResult": ("Error: " + result) if is_error else {"stdout": result, "stderr": ""},
                }
            ),
        )
        return tool_id

    def rest_of_turn(self, prompt_id: str, turn: Turn) -> None:
        """Everything after the prompt: tools, then the reply or the way the turn ended instead."""
        for number, tool in enumerate(turn.tools):
            self._tool_round_trip(prompt_id, tool, number, tool.result, tool.is_error)
        if turn.refused is not None:
            self._tool_round_trip(prompt_id, turn.refused, len(turn.tools), REFUSAL, True)
            self._interrupted(prompt_id, "[Request interrupted by user for tool use]")
        elif turn.interrupted:
            self._interrupted(prompt_id, "[Request interrupted by user]")
        elif turn.api_error is not None:
            text = {"type": "text", "text": turn.api_error}
            self._write(self._assistant([text], "stop_sequence", model="<synthetic>", isApiErrorMessage=True))
        else:
            self._write(self._assistant([{"type": "text", "text": turn.reply}], "end_turn"))
        self._write({"type": "last-prompt", "lastPrompt": turn.user, "sessionId": self.session_id})

    def _interrupted(self, prompt_id: str, marker: str) -> None:
        message = {"role": "user", "content": [{"type": "text", "text": marker}]}
        self._write(self._entry({"promptId": prompt_id, "type": "user", "message": message}))

    def compacted(self, summary: str) -> None:
        """`/compact`: its command entries, the boundary and the summary Claude Code writes."""
        caveat = (
            "<local-command-caveat>Caveat: The messages below were generated by the user while running "
            "local commands. DO NOT respond to these messages or otherwise consider them in your response "
            "unless the user explicitly asks you to.</local-command-caveat>"
        )
        command = (
            "<command-name>/compact</command-name>\n<command-message>compact</command-message>\n"
            "<command-args></command-args>"
        )
        self._write(
            self._entry({"type": "user", "message": {"role": "user", "content": caveat}, "isMeta": True}),
            self._entry({"type": "user", "message": {"role": "user", "content": command}}),
            self._entry(
                {
                    "type": "system",
                    "subtype": "compact_boundary",
                    "content": "Conversation compacted",
                    "isMeta": False,
                    "level": "info",
                    "compactMetadata": {"trigger": "manual"},
                }
            ),
            self._entry(
                {
                    "type": "user",
                    "message": {"role": "user", "content": summary},
                    "isCompactSummary": True,
                    "isVisibleInTranscriptOnly": True,
                }
            ),
        )
