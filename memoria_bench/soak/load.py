"""The clients: each loops until the clock runs out, storing or recalling at random."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx

from memoria_bench.corpus import PersonaPool, SyntheticMemory, generate_memories, make_queries, to_question

QUESTIONS = 6000  # distinct recall texts, drawn at random: repeats hit the query-embedding cache too
STORE = "store"
RECALL = "recall"


@dataclass(frozen=True, slots=True)
class Sample:
    """One request: when it ended (seconds since the start), what it was, how long, its outcome."""

    at_s: float
    op: str
    ms: float
    status: int  # HTTP status, or 0 when no answer came (refused, reset, timed out)


@dataclass(slots=True)
class Workload:
    """Shared by the clients: the memories still to store, the questions, and what was acknowledged."""

    memories: Iterator[SyntheticMemory]
    queries: list[str]
    namespaces: list[str]
    store_share: float
    rng: random.Random = field(default_factory=lambda: random.Random(5))
    acknowledged: list[int] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)

    @classmethod
    def build(cls, pool: PersonaPool, namespaces: int, store_share: float) -> Workload:
        names = [f"soak-{i}" for i in range(namespaces)]
        memories = (
            SyntheticMemory(m.content, names[i % namespaces], m.category, m.tags, m.importance)
            for i, m in enumerate(generate_memories(pool, 10_000_000, 1, seed=23))
        )
        possible = len({to_question(s, variant) for s in pool.held_out for variant in range(3)})
        return cls(memories, make_queries(pool, min(QUESTIONS, possible)), names, store_share)

    def body(self, memory: SyntheticMemory) -> dict[str, object]:
        return {
            "content": memory.content,
            "namespace": memory.namespace,
            "category": memory.category,
            "tags": memory.tags,
            "importance": memory.importance,
        }


async def preload(client: httpx.AsyncClient, work: Workload, count: int) -> None:
    """Store `count` memories in batches of 100 before the clock starts (acknowledged ones counted)."""
    left = count
    while left > 0:
        batch = [work.body(next(work.memories)) for _ in range(min(100, left))]
        response = await client.post("/v1/memories", json=batch)
        response.raise_for_status()
        work.acknowledged += [r["id"] for r in response.json()["results"]]
        left -= len(batch)


async def client_loop(client: httpx.AsyncClient, work: Workload, began: float, until: float) -> None:
    """Requests back to back until `until` (monotonic); a failed one is recorded, never retried."""
    while (now := time.monotonic()) < until:
        if work.rng.random() < work.store_share:
            op, path, body = STORE, "/v1/memories", work.body(next(work.memories))
        else:
            query = work.queries[work.rng.randrange(len(work.queries))]
            op, path = RECALL, "/v1/recall"
            body = {"query": query, "namespace": work.rng.choice(work.namespaces), "limit": 10}
        status = 0
        try:
            response = await client.post(path, json=body)
            status = response.status_code
            if op == STORE and status in (200, 201):
                work.acknowledged.append(response.json()["id"])
        except httpx.HTTPError:
            await asyncio.sleep(0.05)  # no answer at all: do not spin against a closed port
        ended = time.monotonic()
        work.samples.append(Sample(ended - began, op, (ended - now) * 1000.0, status))


async def missing_acknowledged(client: httpx.AsyncClient, ids: list[int], concurrency: int = 8) -> list[int]:
    """The acknowledged ids the API no longer finds (a lost write), checked `concurrency` at a time."""
    pending = iter(ids)
    missing: list[int] = []

    async def check() -> None:
        for memory_id in pending:
            for _attempt in range(3):  # a transient failure is not a lost write
                response = await client.get(f"/v1/memories/{memory_id}")
                if response.status_code in (200, 404):
                    break
                await asyncio.sleep(0.5)
            if response.status_code != 200:
                missing.append(memory_id)

    await asyncio.gather(*(check() for _ in range(concurrency)))
    return sorted(missing)
