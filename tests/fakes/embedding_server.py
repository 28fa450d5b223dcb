"""A fake embeddings HTTP API (Voyage and OpenAI shapes) on 127.0.0.1, served from a thread.

Real clients (`voyageai.AsyncClient`, httpx) talk to it over TCP; it records every request body
so tests can assert what left the process, and it can be scripted to fail (429/5xx, slowness).
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

import numpy as np


def fake_vector(text: str, dimension: int) -> np.ndarray:
    """Deterministic per text and deliberately not unit length (clients must normalise)."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).normal(size=dimension).astype(np.float32) * 3


def closed_port_url() -> str:
    """A URL nothing listens on: connections are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    raw: bytes
    body: dict[str, Any]


@dataclass
class Behaviour:
    """What the next answers look like; `statuses` are consumed one per request before success."""

    statuses: deque[int] = field(default_factory=deque)
    always: int | None = None
    retry_after: str | None = None
    delay_s: float = 0.0
    reverse_order: bool = False
    dimension_override: int | None = None


class FakeEmbeddingServer:
    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self.behaviour = Behaviour()
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def fail_next(self, *statuses: int) -> None:
        self.behaviour.statuses.extend(statuses)

    @property
    def inputs(self) -> list[list[str]]:
        """The `input` list of every request, in arrival order."""
        with self._lock:
            return [list(r.body.get("input", [])) for r in self.requests]

    def raw_bodies(self) -> bytes:
        with self._lock:
            return b"\n".join(r.raw for r in self.requests)

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
        self.behaviour = Behaviour()

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _answer(self, raw: bytes, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        body = json.loads(raw or b"{}")
        with self._lock:
            self.requests.append(Recorded(path, headers, raw, body))
        behaviour = self.behaviour
        if behaviour.delay_s:
            time.sleep(behaviour.delay_s)
        status = behaviour.statuses.popleft() if behaviour.statuses else behaviour.always
        if status is not None:
            extra = {"Retry-After": behaviour.retry_after} if behaviour.retry_after else {}
            error = {"detail": f"fake failure {status}", "error": {"message": f"fake failure {status}"}}
            return status, extra, json.dumps(error).encode()
        if not path.endswith("/embeddings"):
            return 404, {}, json.dumps({"detail": "not found"}).encode()
        return 200, {}, json.dumps(self._embeddings(body)).encode()

    def _embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        width = self.behaviour.dimension_override or self.dimension
        data = []
        for index, text in enumerate(body["input"]):
            vector = fake_vector(text, width)
            encoded: Any = (
                base64.b64encode(vector.astype("<f4").tobytes()).decode()
                if body.get("encoding_format") == "base64"
                else vector.tolist()
            )
            data.append({"object": "embedding", "embedding": encoded, "index": index})
        if self.behaviour.reverse_order:
            data.reverse()
        tokens = sum(len(t.split()) for t in body["input"])
        return {
            "object": "list",
            "data": data,
            "model": body.get("model"),
            "usage": {"total_tokens": tokens, "prompt_tokens": tokens},
        }


def _handler_for(server: FakeEmbeddingServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, extra, payload = server._answer(raw, self.path, headers)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in extra.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: pytest output should show test failures, not access logs."""

    return Handler
