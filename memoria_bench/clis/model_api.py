"""What every fake model API shares: a threaded HTTP server on 127.0.0.1 that records each request
(method, path, JSON body) and answers it through the provider's own `answer`.

A provider's fake (Anthropic Messages, OpenAI Responses, Gemini) subclasses `RecordingApi` and says
only how it answers a path: a JSON object or a server-sent event stream in that provider's shape.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass
class Recorded:
    method: str
    path: str
    body: dict[str, Any]


@dataclass(frozen=True)
class Answer:
    data: bytes
    content_type: str


def json_answer(payload: dict[str, Any]) -> Answer:
    return Answer(json.dumps(payload).encode(), "application/json")


def event_stream(text: str) -> Answer:
    """Server-sent events, already framed by the provider (`event:`/`data:` lines)."""
    return Answer(text.encode(), "text/event-stream")


@dataclass(kw_only=True)
class RecordingApi:
    requests: list[Recorded] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, method: str, path: str, body: dict[str, Any]) -> Answer:
        """The provider's answer to a request already recorded."""
        raise NotImplementedError

    @property
    def origin(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> Self:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                self._respond("GET", {})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                self._respond("POST", body if isinstance(body, dict) else {})

            def _respond(self, method: str, body: dict[str, Any]) -> None:
                fake.record(method, self.path, body)
                answer = fake.answer(method, self.path, body)
                self.send_response(200)
                self.send_header("Content-Type", answer.content_type)
                if answer.content_type == "text/event-stream":
                    self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(answer.data)))
                self.end_headers()
                self.wfile.write(answer.data)

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

    def bodies(self, path_suffix: str) -> list[dict[str, Any]]:
        """The bodies of every POST so far whose path (without its query) ends with `path_suffix`."""
        with self._lock:
            return [
                r.body
                for r in self.requests
                if r.method == "POST" and r.path.split("?")[0].endswith(path_suffix)
            ]


def texts(value: Any) -> Iterator[str]:
    """Every string inside a recorded request body (messages, content blocks, parts, tool results …),
    for a test looking for what an agent put into its request."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from texts(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from texts(item)
