"""The fake OpenAI Chat Completions API (`memoria_bench.clis.openai_chat_api`) with tool calls: its script
answers a request with text, or with a call of one of the tools the request offers, streamed as
OpenAI streams one (a `tool_calls` delta, then `finish_reason: "tool_calls"`), so a real CLI runs
the tool and sends its result back in the next request (a `role: "tool"` message)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memoria_bench.clis.model_api import Answer, event_stream
from memoria_bench.clis.openai_chat_api import FakeOpenAIChat, completion_stream


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]


ToolScript = Callable[[dict[str, Any]], "str | ToolCall"]


def offered_tools(body: dict[str, Any]) -> list[str]:
    """The function names a request offers the model."""
    return [
        str(tool.get("function", {}).get("name", ""))
        for tool in body.get("tools", [])
        if isinstance(tool, dict) and isinstance(tool.get("function"), dict)
    ]


def tool_results(body: dict[str, Any]) -> list[str]:
    """The contents of the request's tool-result messages (what the CLI's tool calls returned)."""
    return [json.dumps(m.get("content")) for m in body.get("messages", []) if m.get("role") == "tool"]


def tool_call_stream(call: ToolCall, model: str) -> str:
    def chunk(delta: dict[str, Any], finish: str | None) -> str:
        body = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(body)}\n\n"

    function = {"name": call.name, "arguments": json.dumps(call.arguments)}
    delta = {
        "role": "assistant",
        "tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": function}],
    }
    return chunk(delta, None) + chunk({}, "tool_calls") + "data: [DONE]\n\n"


@dataclass
class FakeOpenAIChatTools(FakeOpenAIChat):
    tool_script: ToolScript | None = None

    def answer(self, method: str, path: str, body: dict[str, Any]) -> Answer:
        route = path.split("?")[0]
        if (
            self.tool_script
            and method == "POST"
            and route.endswith("/chat/completions")
            and body.get("stream")
        ):
            model = str(body.get("model") or self.model)
            reply = self.tool_script(body)
            if isinstance(reply, ToolCall):
                return event_stream(tool_call_stream(reply, model))
            return event_stream(completion_stream(reply, model))
        return super().answer(method, path, body)
