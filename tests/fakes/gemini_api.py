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
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class FunctionCall:
    name: str
    args: dict[str, Any]


Reply = Text | FunctionCall
Script = Callable[[dict[str, Any]], Reply]


@dataclass
class Recorded:
    method: str
    path: str
    body: dict[str, Any]


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
class FakeGemini:
    script: Script
    requests: list[Recorded] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeGemini:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_GET(self) -> None:
                fake.requests.append(Recorded("GET", self.path, {}))
                self._json({})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                body = body if isinstance(body, dict) else {}
                fake.requests.append(Recorded("POST", self.path, body))
                action = self.path.split("?")[0].rsplit(":", 1)[-1]
                if action == "streamGenerateContent":
                    self._sse(generate_content_response(fake.script(body), _model_of(self.path)))
                elif action == "generateContent":
                    self._json(generate_content_response(fake.script(body), _model_of(self.path)))
                elif action == "countTokens":
                    self._json({"totalTokens": 100})
                else:
                    self._json({})

            def _json(self, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _sse(self, chunk: dict[str, Any]) -> None:
                data = f"data: {json.dumps(chunk)}\r\n\r\n".encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def generations(self) -> list[dict[str, Any]]:
        """The bodies of every `streamGenerateContent` request so far (the model's turns)."""
        return [r.body for r in self.requests if r.path.split("?")[0].endswith(":streamGenerateContent")]


def texts(value: Any) -> Iterator[str]:
    """Every string inside a request body's `contents` (text parts, function responses, ...)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from texts(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from texts(item)
