"""The stores over real HTTP: batches of synthetic memories POSTed to `/v1/memories`, a fixed number
in flight, each answer kept with its `Server-Timing` phases.

Batches are handed out in order from one shared iterator, so `concurrency` requests are in flight
until the last ones (or, paced, each batch at its time); the clock runs from the first request sent
to the last answer received. An answer that is not a 201 is counted (with its status), not raised:
the report says how many memories were accepted, and the command refuses a run that had errors.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from app.core.timing import parse_server_timing
from memoria_bench.corpus import SyntheticMemory

STORE_ROUTE = "/v1/memories"
REQUEST_TIMEOUT_S = 120.0  # a batch under a loaded machine; the server's own write deadline is 60 s


@dataclass(slots=True)
class StoreSample:
    """One batch request: what was sent, what came back and how long it took (ms, client clock)."""

    size: int
    status: int
    client_ms: float
    phases: dict[str, float] = field(default_factory=dict)
    new: int = 0
    duplicates: int = 0
    embedded: int = 0
    error: str | None = None


@dataclass(slots=True)
class StoreRun:
    samples: list[StoreSample]
    wall_s: float  # first request sent → last answer received
    began: float  # time.perf_counter() when the first request was sent
    ended: float


def batch_bodies(memories: Sequence[SyntheticMemory], batch: int, namespace: str | None = None) -> list[Any]:
    """The JSON array bodies, `batch` memories each (the last may be shorter); `namespace` overrides
    the memories' own."""
    bodies: list[Any] = []
    for start in range(0, len(memories), batch):
        bodies.append(
            [
                {
                    "content": m.content,
                    "namespace": namespace or m.namespace,
                    "category": m.category,
                    "tags": m.tags,
                    "importance": m.importance,
                }
                for m in memories[start : start + batch]
            ]
        )
    return bodies


def _sample(body: list[Any], response: httpx.Response, client_ms: float) -> StoreSample:
    sample = StoreSample(size=len(body), status=response.status_code, client_ms=client_ms)
    if "server-timing" in response.headers:
        sample.phases = parse_server_timing(response.headers["server-timing"])
    if response.status_code != 201:
        sample.error = response.text[:300]
        return sample
    results = response.json()["results"]
    sample.new = sum(1 for r in results if not r["duplicate"])
    sample.duplicates = len(results) - sample.new
    sample.embedded = sum(1 for r in results if r["embedded"])
    return sample


def send_times(bodies: Sequence[list[Any]], rate: float) -> list[float]:
    """Seconds after the start at which each body is due when memories are sent at `rate` per
    second: a body goes once every memory before it has had its share of the time."""
    times: list[float] = []
    sent = 0
    for body in bodies:
        times.append(sent / rate)
        sent += len(body)
    return times


async def store_batches(
    client: httpx.AsyncClient, bodies: Sequence[list[Any]], concurrency: int, rate: float | None = None
) -> StoreRun:
    """POST every body with at most `concurrency` requests in flight; with `rate`, no body before
    its time at that many memories per second (`send_times`): a paced load instead of a flood, late
    bodies going as soon as a request slot frees."""
    due = send_times(bodies, rate) if rate else [0.0] * len(bodies)
    pending = iter(zip(bodies, due, strict=True))
    samples: list[StoreSample] = []
    start = time.perf_counter()

    async def worker() -> None:
        for body, at in pending:
            wait = start + at - time.perf_counter()
            if wait > 0:
                await asyncio.sleep(wait)
            began = time.perf_counter()
            try:
                response = await client.post(STORE_ROUTE, json=body, timeout=REQUEST_TIMEOUT_S)
            except httpx.TransportError as exc:
                ms = (time.perf_counter() - began) * 1000.0
                samples.append(StoreSample(size=len(body), status=0, client_ms=ms, error=repr(exc)))
                continue
            samples.append(_sample(body, response, (time.perf_counter() - began) * 1000.0))

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    ended = time.perf_counter()
    return StoreRun(samples=samples, wall_s=ended - start, began=start, ended=ended)
