"""`memoria bench replica`'s read-your-writes leg: what the chosen rule costs a writer, measured.

The service's rule (app/db/replica.py): after a user writes, that user's reads go to the primary
until the router's probe sees the replica has replayed a primary position read after the write;
everyone else keeps reading the replica. This leg plays an agent that stores a memory and recalls
it at once (the next prompt), then recalls it again `gap_s` later, `rounds` times, as one key over
HTTP. For every recall it reads where the read pool sent it (the `memoria_db_reads_total{target}`
counter of `/metrics`, before and after that one request) and whether the memory came back: the
immediate recall shows the rule holding (found, on the primary), the later one shows the writer's
reads returning to the replica once it has replayed the write.
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx

from app.core.stats import latency_summary

NAMESPACE = "bench-read-your-writes"
_READS = re.compile(r'^memoria_db_reads_total\{target="(primary|replica)"\} ([0-9.e+]+)$', re.MULTILINE)


@dataclass(slots=True)
class _Recalls:
    """The recalls of one kind (immediate or later): found or not, where they read, how long."""

    found: int = 0
    on_primary: int = 0
    on_replica: int = 0
    ms: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        total = len(self.ms)
        return {
            "recalls": total,
            "found": self.found,
            "read_on_primary": self.on_primary,
            "read_on_replica": self.on_replica,
            "latency_ms": latency_summary(self.ms, None) if self.ms else {},
        }


async def _reads(metrics: httpx.AsyncClient) -> dict[str, float]:
    response = await metrics.get("/metrics")
    response.raise_for_status()
    return {target: float(value) for target, value in _READS.findall(response.text)}


async def _recall(
    client: httpx.AsyncClient, metrics: httpx.AsyncClient, query: str, memory_id: int, into: _Recalls
) -> None:
    before = await _reads(metrics)
    began = time.perf_counter()
    response = await client.post("/v1/recall", json={"query": query, "namespace": NAMESPACE})
    into.ms.append((time.perf_counter() - began) * 1000.0)
    after = await _reads(metrics)
    response.raise_for_status()
    into.found += memory_id in {hit["id"] for hit in response.json()["results"]}
    into.on_primary += after.get("primary", 0.0) > before.get("primary", 0.0)
    into.on_replica += after.get("replica", 0.0) > before.get("replica", 0.0)


async def read_your_writes_leg(
    base: str, key: str, metrics_token: str, rounds: int, gap_s: float
) -> dict[str, Any]:
    """`rounds` of: store one memory, recall it at once, wait `gap_s`, recall it again."""
    immediate, later = _Recalls(), _Recalls()
    async with (
        httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30) as client,
        httpx.AsyncClient(
            base_url=base, headers={"Authorization": f"Bearer {metrics_token}"}, timeout=30
        ) as metrics,
    ):
        for round_ in range(rounds):
            word = f"ryw{uuid.uuid4().hex[:8]}"
            content = f"Round {round_}: the {word} service rotates its credentials at midnight"
            stored = await client.post("/v1/memories", json={"content": content, "namespace": NAMESPACE})
            stored.raise_for_status()
            memory_id = int(stored.json()["id"])
            await _recall(client, metrics, f"{word} credentials", memory_id, immediate)
            await asyncio.sleep(gap_s)
            await _recall(client, metrics, f"{word} credentials", memory_id, later)
    return {"rounds": rounds, "gap_s": gap_s, "immediate": immediate.summary(), "later": later.summary()}
