"""Recall over real HTTP: what an agent sees, query embedding and the API stack included.

The client is aiohttp's: it shares the machine's cores with the server it measures, so its own CPU
per request shows up as server latency and lost throughput; aiohttp's client spends less of it than
httpx's AsyncClient, measured against the same server, interleaved (the comparison and its figures:
docs/benchmarks/).

Each fused mode gets texts of its own (the server caches query vectors, and a repeated text would
hide the model's cost); lexical-only runs the texts of every fused mode, block for block beside it.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Sequence
from typing import Any

import aiohttp
import asyncpg
import msgspec

from app.auth.service import create_key
from app.core.stats import latency_summary
from app.core.timing import parse_server_timing
from memoria_bench.latency.schedule import FUSED_MODES, MODES, WARMUP, paired_blocks
from memoria_bench.latency.scopes import Scope


async def api_key(url: str, user: str) -> str:
    """A fresh key for `user`, so the benchmark authenticates as any client does."""
    conn = await asyncpg.connect(url)
    try:
        return (await create_key(conn, user, label="bench latency")).key
    finally:
        await conn.close()


def request_body(text: str, namespace: str | None, mode: str) -> dict[str, Any]:
    """The `/v1/recall` body for `text` in `mode`; `all` sends no weights (the configured defaults),
    no `namespace` every namespace of the caller's."""
    body: dict[str, Any] = {"query": text, "limit": 10}
    if namespace is not None:
        body["namespace"] = namespace
    weights = MODES[mode]
    if weights is not None:
        body["weights"] = {leg: w for leg, w in msgspec.structs.asdict(weights).items() if w is not None}
    return body


#: The phases of a recall that follow one another (`app.recall.service`, `app.auth.middleware`);
#: `embed` runs beside `begin` and `scope`, and only `embed-wait` of it is on the request's path.
SEQUENTIAL_PHASES = ("auth", "begin", "scope", "embed-wait", "sql", "commit")
SPLIT_COLUMNS = (*SEQUENTIAL_PHASES, "embed", "other", "app", "outside", "rest")


def request_split(phases: dict[str, float], client_ms: float) -> dict[str, float]:
    """One request's time by phase, from its `Server-Timing`: the recorded phases, `other` (the rest
    of the time inside the application: routing, decoding, validation, serialization) and `outside`
    (what the client waited beyond the application: network, HTTP server, client), and `rest`, what
    the client waited for neither the statement nor the query embedding (the issue's "non-SQL,
    non-embedding share": the fixed cost of a request, taken per request, not from medians)."""
    app = phases.get("app", 0.0)
    split = {phase: phases.get(phase, 0.0) for phase in (*SEQUENTIAL_PHASES, "embed")}
    split["other"] = max(app - sum(split[phase] for phase in SEQUENTIAL_PHASES), 0.0)
    split["app"] = app
    split["outside"] = max(client_ms - app, 0.0)
    split["rest"] = max(client_ms - split["sql"] - split["embed-wait"], 0.0)
    return split


UNAVAILABLE = 503
"""A recall that ran out of time (statement timeout, request deadline): counted and timed, not fatal."""


async def _drive(
    session: aiohttp.ClientSession, bodies: Sequence[dict[str, Any]], concurrency: int
) -> tuple[list[float], list[dict[str, float]], float, int]:
    """POST every body with `concurrency` requests in flight; (per-request ms, per-request split
    from the `Server-Timing` header when the server sends one, wall seconds, answers that ran out
    of time). A 503 is timed like any answer (it is what the client waited) and counted; any other
    error ends the run."""
    pending = iter(bodies)
    samples: list[float] = []
    splits: list[dict[str, float]] = []
    timed_out = 0

    async def worker() -> None:
        for body in pending:
            began = time.perf_counter()
            async with session.post("/v1/recall", data=msgspec.json.encode(body)) as response:
                answer = await response.read()
            elapsed = (time.perf_counter() - began) * 1000.0
            if response.status == UNAVAILABLE:
                nonlocal timed_out
                timed_out += 1
            elif response.status != 200:
                detail = answer[:300].decode(errors="replace")
                raise RuntimeError(f"recall answered {response.status}: {detail}")
            samples.append(elapsed)
            if "server-timing" in response.headers:
                splits.append(request_split(parse_server_timing(response.headers["server-timing"]), elapsed))

    began = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return samples, splits, time.perf_counter() - began, timed_out


def median_split(splits: Sequence[dict[str, float]]) -> dict[str, float]:
    """The median of each phase over the requests (empty without `Server-Timing`)."""
    if not splits:
        return {}
    return {column: round(statistics.median(s[column] for s in splits), 2) for column in SPLIT_COLUMNS}


async def http_latency(
    base: str, key: str, scope: Scope, concurrency: int, queries: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """`queries` holds WARMUP + requests texts for each fused mode, split between them in order.
    Each mode's summary carries `split`, the median request split by phase (`request_split`)."""
    per_mode = len(queries) // len(FUSED_MODES)
    texts_of = {mode: queries[i * per_mode : (i + 1) * per_mode] for i, mode in enumerate(FUSED_MODES)}
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    async with aiohttp.ClientSession(
        base_url=base,
        headers=headers,
        connector=aiohttp.TCPConnector(limit=concurrency),  # one kept-alive connection per worker
        timeout=aiohttp.ClientTimeout(total=30.0),
    ) as session:
        for mode, texts in paired_blocks({m: t[:WARMUP] for m, t in texts_of.items()}, size=WARMUP):
            await _drive(session, [request_body(t, scope.namespace, mode) for t in texts], concurrency)
        samples: dict[str, list[float]] = {mode: [] for mode in MODES}
        splits: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
        wall: dict[str, float] = dict.fromkeys(MODES, 0.0)
        timed_out: dict[str, int] = dict.fromkeys(MODES, 0)
        for mode, texts in paired_blocks({m: t[WARMUP:] for m, t in texts_of.items()}):
            values, split, seconds, failed = await _drive(
                session, [request_body(t, scope.namespace, mode) for t in texts], concurrency
            )
            samples[mode] += values
            splits[mode] += split
            wall[mode] += seconds
            timed_out[mode] += failed
    return {
        mode: {
            **latency_summary(values, wall[mode]),
            "split": median_split(splits[mode]),
            "timed_out": timed_out[mode],
        }
        for mode, values in samples.items()
    }
