"""A fake OpenAI Chat Completions API on 127.0.0.1 for driving the real Qwen Code (`OPENAI_BASE_URL`).

It records every request and answers `POST …/chat/completions` as OpenAI does: with `stream: true`
as server-sent events (a role chunk, a content chunk, a finish chunk with usage, then
`data: [DONE]`), else one `chat.completion` JSON object; `GET …/models` lists one model; anything
else is an empty object. What the "model" says is `script`, a function of the request body: a text,
or a `ToolCall` (streamed as OpenAI streams one call of a function, ending in `tool_calls`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memoria_bench.clis.model_api import Answer, RecordingApi, event_stream, json_answer


@dataclass(frozen=True)
class ToolCall:
    """The model calls function `name` with `arguments`."""

    name: str
    arguments: dict[str, Any]


Script = Callable[[dict[str, Any]], "str | ToolCall"]

_USAGE = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}


def _chunk(model: str, delta: dict[str, Any], finish: str | None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


def completion_stream(text: str, model: str) -> str:
    """`text` as the model's whole reply, in OpenAI's streamed chunks, ending in `data: [DONE]`."""
    chunks = [
        _chunk(model, {"role": "assistant", "content": ""}, None),
        _chunk(model, {"content": text}, None),
        _chunk(model, {}, "stop", usage=_USAGE),
    ]
    return "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"


def tool_call_stream(call: ToolCall, model: str) -> str:
    """One call of `call.name`, in OpenAI's streamed chunks (name first, then the arguments)."""
    head = {
        "index": 0,
        "id": "call_fake_1",
        "type": "function",
        "function": {"name": call.name, "arguments": ""},
    }
    rest = {"index": 0, "function": {"arguments": json.dumps(call.arguments)}}
    chunks = [
        _chunk(model, {"role": "assistant", "content": None, "tool_calls": [head]}, None),
        _chunk(model, {"tool_calls": [rest]}, None),
        _chunk(model, {}, "tool_calls", usage=_USAGE),
    ]
    return "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"


def completion(text: str, model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": _USAGE,
    }


@dataclass
class FakeOpenAIChat(RecordingApi):
    script: Script
    model: str = "qwen-fake"

    @property
    def base_url(self) -> str:
        """What `OPENAI_BASE_URL` is set to (the client adds `/chat/completions`)."""
        return self.origin + "/v1"

    def answer(self, method: str, path: str, body: dict[str, Any]) -> Answer:
        route = path.split("?")[0]
        if method == "POST" and route.endswith("/chat/completions"):
            model = str(body.get("model") or self.model)
            said = self.script(body)
            if isinstance(said, ToolCall):
                return event_stream(tool_call_stream(said, model))
            if body.get("stream"):
                return event_stream(completion_stream(said, model))
            return json_answer(completion(said, model))
        if method == "GET" and route.endswith("/models"):
            return json_answer({"object": "list", "data": [{"id": self.model, "object": "model"}]})
        return json_answer({})

    def completions(self) -> list[dict[str, Any]]:
        """The bodies of every `chat/completions` request so far (the model's turns)."""
        return self.bodies("/chat/completions")
