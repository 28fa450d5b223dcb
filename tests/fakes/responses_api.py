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
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


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
class Recorded:
    method: str
    path: str
    body: dict[str, Any]


@dataclass
class FakeResponses:
    script: Script
    requests: list[Recorded] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        """The provider's `base_url` (Codex appends `/responses`)."""
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> FakeResponses:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_GET(self) -> None:
                fake.record("GET", self.path, {})
                self._json({"object": "list", "data": [], "models": []})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                fake.record("POST", self.path, body)
                if self.path.split("?")[0].endswith("/responses"):
                    self._stream(_events(body, fake.script(body), len(fake.responses())))
                else:
                    self._json({})

            def _json(self, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, events: list[dict[str, Any]]) -> None:
                data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
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

    def record(self, method: str, path: str, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(Recorded(method, path, body))

    def responses(self) -> list[dict[str, Any]]:
        """The bodies of every `POST …/responses` so far."""
        with self._lock:
            return [r.body for r in self.requests if r.path.split("?")[0].endswith("/responses")]


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
