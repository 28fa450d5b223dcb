"""A fake Gemini API on 127.0.0.1 for driving the real Gemini CLI (`GOOGLE_GEMINI_BASE_URL`).

It records every request and answers the calls Gemini CLI makes as the real API does:
`POST /v1beta/models/<model>:streamGenerateContent?alt=sse` streamed as server-sent events (one
`data: <GenerateContentResponse>` chunk), `:generateContent` as one JSON response, `:countTokens`
with a count, anything else an empty object. What the "model" says is decided by `script`, a
function of the request body: a text, or a function call (a tool the CLI then runs and answers
with a `functionResponse` part in the next request).
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
    args: dict[str, Any]


Reply = Text | FunctionCall
Script = Callable[[dict[str, Any]], Reply]


def _usage() -> dict[str, int]:
    return {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110}


def generate_content_response(reply: Reply, model: str) -> dict[str, Any]:
    """A GenerateContentResponse holding `reply` as the model's whole turn."""
    part: dict[str, Any]
    if isinstance(reply, FunctionCall):
        part = {"functionCall": {"name": reply.name, "args": reply.args}}
    else:
        part = {"text": reply.text}
    return {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": _usage(),
        "modelVersion": model,
    }


def _model_of(path: str) -> str:
    """`gemini-2.5-flash` from `/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`."""
    name = path.split("?")[0].rsplit("/", 1)[-1]
    return name.split(":")[0]


@dataclass
class FakeGemini(RecordingApi):
    script: Script

    @property
    def url(self) -> str:
        return self.origin

    def answer(self, method: str, path: str, body: dict[str, Any]) -> Answer:
        action = path.split("?")[0].rsplit(":", 1)[-1]
        if method == "POST" and action == "streamGenerateContent":
            chunk = generate_content_response(self.script(body), _model_of(path))
            return event_stream(f"data: {json.dumps(chunk)}\r\n\r\n")
        if method == "POST" and action == "generateContent":
            return json_answer(generate_content_response(self.script(body), _model_of(path)))
        if method == "POST" and action == "countTokens":
            return json_answer({"totalTokens": 100})
        return json_answer({})

    def generations(self) -> list[dict[str, Any]]:
        """The bodies of every `streamGenerateContent` request so far (the model's turns)."""
        return self.bodies(":streamGenerateContent")
