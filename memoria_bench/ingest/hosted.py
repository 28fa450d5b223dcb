"""A stand-in for a hosted embedding API, on 127.0.0.1, for `bench ingest --hosted-embedder-ms`.

In production the model runs elsewhere (Voyage): the server's cores do the SQL and the graph, not
the embedding. On this machine the local model takes most of a store's time, so the ingest figure
is the model's. With the stand-in the server embeds through its real hosted-provider path (the
OpenAI-compatible client: HTTP, retries, vector checks) against an API that answers after a fixed
delay, like a remote model, with deterministic unit vectors; what is left is the product's own cost.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

MODEL = "hosted-stand-in"


def stand_in_vector(text: str, dimension: int) -> list[float]:
    """A unit vector that depends on the text alone."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    vector = np.random.default_rng(seed).normal(size=dimension)
    return [float(x) for x in vector / np.linalg.norm(vector)]


def _handler(dimension: int, latency_s: float) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            time.sleep(latency_s)  # the remote model's time: this thread waits, the server's cores do not
            texts: list[str] = body.get("input", [])
            answer = {
                "object": "list",
                "model": MODEL,
                "data": [
                    {"object": "embedding", "index": i, "embedding": stand_in_vector(text, dimension)}
                    for i, text in enumerate(texts)
                ],
                "usage": {"prompt_tokens": 0, "total_tokens": 0},
            }
            payload = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: one line per batch would bury the report."""

    return Handler


@contextmanager
def hosted_embedder(dimension: int, latency_ms: float) -> Iterator[dict[str, str]]:
    """Serve the stand-in while the block runs; yields the environment that points `memoria serve` at it."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(dimension, latency_ms / 1000.0))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield {
            "MEMORIA_EMBEDDINGS__PROVIDER": "openai-compatible",
            "MEMORIA_EMBEDDINGS__MODEL": MODEL,
            "MEMORIA_EMBEDDINGS__DIMENSION": str(dimension),
            "MEMORIA_EMBEDDINGS__BASE_URL": f"http://127.0.0.1:{httpd.server_address[1]}/v1",
        }
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
