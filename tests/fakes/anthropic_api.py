"""A fake Anthropic Messages API on 127.0.0.1 for driving the real Claude Code (`ANTHROPIC_BASE_URL`).

It records every request and answers `POST /v1/messages` as the real API does, streamed (the
`message_start`, `content_block_start/delta/stop`, `message_delta`, `message_stop` SSE events) or
not. What the "model" says is decided by `script`, a function of the request body: a text, or a
tool call. `POST /v1/messages/count_tokens` gets a token count; anything else an empty object.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


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
class Recorded:
    path: str
    body: dict[str, Any]


@dataclass
class FakeAnthropic:
    script: Script
    requests: list[Recorded] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeAnthropic:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_GET(self) -> None:
                fake.requests.append(Recorded(self.path, {}))
                self._json({})

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                fake.requests.append(Recorded(self.path, body))
                path = self.path.split("?")[0]
                if path.endswith("/count_tokens"):
                    self._json({"input_tokens": 100})
                elif path.endswith("/v1/messages"):
                    reply = fake.script(body)
                    if body.get("stream"):
                        self._stream(body, reply)
                    else:
                        self._json(_message(body, reply))
                else:
                    self._json({})

            def _json(self, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, body: dict[str, Any], reply: Reply) -> None:
                data = "".join(
                    f"event: {event['type']}\ndata: {json.dumps(event)}\n\n" for event in _events(body, reply)
                ).encode()
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

    def messages(self) -> list[dict[str, Any]]:
        """The bodies of every `POST /v1/messages` so far."""
        return [r.body for r in self.requests if r.path.split("?")[0].endswith("/v1/messages")]


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
