"""A fake OpenAI Responses API on 127.0.0.1 for driving the real Codex CLI (a `model_provider` whose
`base_url` points here, `wire_api = "responses"`).

It records every request and answers `POST …/responses` as a stream of server-sent events the way
the Responses API does (`response.created`, `response.output_item.added`, `response.output_text.delta`,
`response.output_item.done`, `response.completed`). What the "model" says is decided by `script`,
a function of the request body: a text, or a function call. Any other request gets an empty list of
models or an empty object.
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
class FunctionCall:
    name: str
    arguments: dict[str, Any]
    call_id: str = "call_memoria_01"
    namespace: str | None = None
    """The tool namespace the function belongs to (Codex lists an MCP server's tools under one)."""


Reply = Text | FunctionCall
Script = Callable[[dict[str, Any]], Reply]


@dataclass
class FakeResponses(RecordingApi):
    script: Script

    @property
    def url(self) -> str:
        """The provider's `base_url` (Codex appends `/responses`)."""
        return f"{self.origin}/v1"

    def answer(self, method: str, path: str, body: dict[str, Any]) -> Answer:
        if method == "GET":
            return json_answer({"object": "list", "data": [], "models": []})
        if path.split("?")[0].endswith("/responses"):
            events = _events(body, self.script(body), len(self.responses()))
            return event_stream("".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events))
        return json_answer({})

    def responses(self) -> list[dict[str, Any]]:
        """The bodies of every `POST …/responses` so far."""
        return self.bodies("/responses")


def _item(reply: Reply, number: int) -> dict[str, Any]:
    if isinstance(reply, FunctionCall):
        call = {
            "type": "function_call",
            "id": f"fc_fake_{number}",
            "call_id": reply.call_id,
            "name": reply.name,
            "arguments": json.dumps(reply.arguments),
            "status": "completed",
        }
        return call if reply.namespace is None else {**call, "namespace": reply.namespace}
    return {
        "type": "message",
        "id": f"msg_fake_{number}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
    }


def _events(body: dict[str, Any], reply: Reply, number: int) -> list[dict[str, Any]]:
    response_id = f"resp_fake_{number}"
    item = _item(reply, number)
    shell = {
        "id": response_id,
        "object": "response",
        "model": body.get("model", "fake"),
        "status": "in_progress",
    }
    usage = {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 10,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 110,
    }
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": shell},
        {"type": "response.output_item.added", "output_index": 0, "item": {**item, "status": "in_progress"}},
    ]
    if isinstance(reply, Text):
        events.append(
            {
                "type": "response.output_text.delta",
                "item_id": item["id"],
                "output_index": 0,
                "content_index": 0,
                "delta": reply.text,
            }
        )
    events += [
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {
            "type": "response.completed",
            "response": {**shell, "status": "completed", "output": [item], "usage": usage},
        },
    ]
    return events
