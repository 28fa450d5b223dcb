"""A fake Anthropic Messages API on 127.0.0.1 for driving the real Claude Code (`ANTHROPIC_BASE_URL`).

It records every request and answers `POST /v1/messages` as the real API does, streamed (the
`message_start`, `content_block_start/delta/stop`, `message_delta`, `message_stop` SSE events) or
not. What the "model" says is decided by `script`, a function of the request body: a text, or a
tool call. `POST /v1/messages/count_tokens` gets a token count; anything else an empty object.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memoria_bench.clis.model_api import Answer, RecordingApi, event_stream, json_answer


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class ToolUse:
    name: str
    input: dict[str, Any]
    id: str = "toolu_memoria_01"


Reply = Text | ToolUse
Script = Callable[[dict[str, Any]], Reply]


@dataclass
class FakeAnthropic(RecordingApi):
    script: Script

    @property
    def url(self) -> str:
        return self.origin

    def answer(self, method: str, path: str, body: dict[str, Any]) -> Answer:
        path = path.split("?")[0]
        if method == "POST" and path.endswith("/count_tokens"):
            return json_answer({"input_tokens": 100})
        if method == "POST" and path.endswith("/v1/messages"):
            reply = self.script(body)
            if body.get("stream"):
                events = _events(body, reply)
                return event_stream("".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events))
            return json_answer(_message(body, reply))
        return json_answer({})

    def messages(self) -> list[dict[str, Any]]:
        """The bodies of every `POST /v1/messages` so far."""
        return self.bodies("/v1/messages")


def _usage() -> dict[str, int]:
    return {
        "input_tokens": 100,
        "output_tokens": 10,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _block(reply: Reply) -> dict[str, Any]:
    if isinstance(reply, ToolUse):
        return {"type": "tool_use", "id": reply.id, "name": reply.name, "input": reply.input}
    return {"type": "text", "text": reply.text}


def _stop_reason(reply: Reply) -> str:
    return "tool_use" if isinstance(reply, ToolUse) else "end_turn"


def _message(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    return {
        "id": "msg_fake_01",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "claude-fake"),
        "content": [_block(reply)],
        "stop_reason": _stop_reason(reply),
        "stop_sequence": None,
        "usage": _usage(),
    }


def _events(body: dict[str, Any], reply: Reply) -> list[dict[str, Any]]:
    start = {**_message(body, reply), "content": [], "stop_reason": None}
    if isinstance(reply, ToolUse):
        opening = {"type": "tool_use", "id": reply.id, "name": reply.name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(reply.input)}
    else:
        opening = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": reply.text}
    return [
        {"type": "message_start", "message": start},
        {"type": "content_block_start", "index": 0, "content_block": opening},
        {"type": "ping"},
        {"type": "content_block_delta", "index": 0, "delta": delta},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": _stop_reason(reply), "stop_sequence": None},
            "usage": {"output_tokens": 10},
        },
        {"type": "message_stop"},
    ]
