"""`memoria bench latency`'s HTTP driver against a scripted server on 127.0.0.1: what it counts,
times and refuses. (The real API is driven end to end by tests/test_bench_latency.py.)"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest
from aiohttp import web

from memoria_bench.latency.http import http_latency
from memoria_bench.latency.schedule import FUSED_MODES, WARMUP
from memoria_bench.latency.scopes import Scope

SCOPE = Scope("big", "bench-main", (1,), 100)
TIMED = 4  # timed texts per fused mode


def fused_texts(mark: Callable[[str, int], str]) -> list[str]:
    """WARMUP untimed then TIMED timed texts per fused mode, in `http_latency`'s order; `mark`
    may rewrite the i-th timed text of a mode."""
    texts: list[str] = []
    for mode in FUSED_MODES:
        texts += [f"{mode} warm-up {i}" for i in range(WARMUP)]
        texts += [mark(mode, i) for i in range(TIMED)]
    return texts


async def scripted(request: web.Request) -> web.Response:
    """200 with a Server-Timing header; 503 for a text marked `timeout`, 400 for one marked `bad`."""
    assert request.headers["Authorization"] == "Bearer k"
    query = (await request.json())["query"]
    if "timeout" in query:
        return web.json_response({"status": 503, "detail": "deadline"}, status=503)
    if "bad" in query:
        return web.json_response({"status": 400, "detail": "limit must be at most 100"}, status=400)
    return web.json_response({"results": []}, headers={"Server-Timing": "sql;dur=1.5, app;dur=3.0"})


@pytest.fixture
async def fake_api() -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_post("/v1/recall", scripted)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def test_answers_that_ran_out_of_time_are_timed_and_counted_per_mode(fake_api: str) -> None:
    def mark(mode: str, i: int) -> str:
        return f"{mode} timeout {i}" if mode == "lexical+dense" and i < 2 else f"{mode} {i}"

    summary = await http_latency(fake_api, "k", SCOPE, 2, fused_texts(mark))
    # lexical-only runs every fused mode's texts beside it, the two 503s included
    timed_out = {mode: s["timed_out"] for mode, s in summary.items()}
    assert timed_out == {"lexical": 2, "lexical+dense": 2, "all": 0}
    assert {mode: s["n"] for mode, s in summary.items()} == {"lexical": 8, "lexical+dense": 4, "all": 4}
    assert summary["all"]["split"]["sql"] == 1.5 and summary["all"]["split"]["app"] == 3.0


async def test_any_other_error_ends_the_run_with_the_servers_words(fake_api: str) -> None:
    texts = fused_texts(lambda mode, i: f"{mode} bad {i}" if mode == "all" and i == 3 else f"{mode} {i}")
    with pytest.raises(RuntimeError, match="recall answered 400: .*limit must be at most 100"):
        await http_latency(fake_api, "k", SCOPE, 1, texts)
