"""`memoria bench replica`: recall on the primary alone against primary + one streaming replica, and
the replica's lag while the service stores at a set rate (300 memories/s by default) or as fast as
it can.

One embedded primary in a temporary folder, one hot standby of it made by `pg_basebackup -R -X
stream` (memoria_bench.standby), and a real `memoria serve` over HTTP for each leg: first with the
read URL unset (every read on the primary), then with it pointing at the replica, where a writer's
read-your-writes is measured too (memoria_bench.read_your_writes). The same corpus,
the same queries, the same concurrencies. How many reads the replica served is read from the
replica's own `pg_stat_database.xact_commit` for the bench database (its lag probes included, which
are one transaction per probe interval).

Lag is sampled every `sample_s` on the servers themselves: the primary's `pg_current_wal_lsn()` and
the replica's `pg_last_wal_replay_lsn()`. Bytes behind is their difference; seconds behind is how
long ago the primary first wrote past what the replica has replayed (resolution: one sample), the
measure the router's probe uses (app/db/replica.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import asyncpg
import httpx
import msgspec
import numpy as np
from rich.console import Console
from rich.table import Table

from app.auth.service import create_key
from app.core.stats import latency_summary
from app.db.embedded import start_server
from memoria_bench.corpus import generate_memories, load_pool
from memoria_bench.ingest.load import batch_bodies, store_batches
from memoria_bench.latency.http import request_body
from memoria_bench.read_your_writes import read_your_writes_leg
from memoria_bench.scratch import bench_user, scratch_database
from memoria_bench.serve import served_api
from memoria_bench.standby import Replica

USER = "bench-replica"
READ_URL = "MEMORIA_DATABASE__READ_URL"
RECALL_MODE = "all"  # the configured fusion, as the hook sends it
REPLAYED = "SELECT pg_last_wal_replay_lsn() - '0/0'::pg_lsn"
WRITTEN = "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn"
COMMITS = "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
EMBEDDING_MODELS = "SELECT string_agg(DISTINCT embedding_model, ', ') FROM memories"


@dataclass(frozen=True, slots=True)
class ReplicaBenchOptions:
    sentences: Path
    shared_buffers: str
    dimension: int
    memories: int = 2000
    requests: int = 400
    concurrencies: tuple[int, ...] = (1, 8)
    ingest_memories: int = 6000
    ingest_clients: int = 4
    ingest_rate: float | None = 300.0
    """Memories per second the ingest leg sends (the issue's figure); None: as fast as the service
    takes them. A machine that cannot keep up sends late batches as soon as a slot frees, and the
    report's achieved rate says so."""
    batch: int = 100
    sample_s: float = 0.1
    seed: int = 11
    ryw_rounds: int = 30
    """Rounds of the read-your-writes leg (memoria_bench.read_your_writes): store, recall at once,
    recall again `ryw_gap_s` later."""
    ryw_gap_s: float = 1.0


async def _recall(base: str, key: str, texts: Sequence[str], concurrency: int) -> dict[str, Any]:
    """POST every text to /v1/recall with `concurrency` in flight; the latency summary."""
    pending = iter(texts)
    samples: list[float] = []
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    async with aiohttp.ClientSession(
        base_url=base,
        headers=headers,
        connector=aiohttp.TCPConnector(limit=concurrency),
        timeout=aiohttp.ClientTimeout(total=30.0),
    ) as session:

        async def worker() -> None:
            for text in pending:
                began = time.perf_counter()
                body = msgspec.json.encode(request_body(text, None, RECALL_MODE))
                async with session.post("/v1/recall", data=body) as response:
                    answer = await response.read()
                if response.status != 200:
                    raise RuntimeError(f"recall answered {response.status}: {answer[:300]!r}")
                samples.append((time.perf_counter() - began) * 1000.0)

        began = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - began
    return latency_summary(samples, wall)


async def _commits(url: str) -> int:
    conn = await asyncpg.connect(url)
    try:
        return int(await conn.fetchval(COMMITS))
    finally:
        await conn.close()


async def _recall_leg(
    base: str, key: str, queries: Sequence[str], options: ReplicaBenchOptions, replica_url: str
) -> dict[str, Any]:
    """Warm-up, then each concurrency over the same queries; the replica's transactions meanwhile."""
    await _recall(base, key, queries[:20], 2)
    before = await _commits(replica_url)
    began = time.perf_counter()
    runs = {f"c={c}": await _recall(base, key, queries[: options.requests], c) for c in options.concurrencies}
    seconds = time.perf_counter() - began
    return {
        **runs,
        "replica_transactions": await _commits(replica_url) - before,
        "recalls_sent": options.requests * len(options.concurrencies),
        "seconds": round(seconds, 2),
    }


class LagSampler:
    """(seconds, bytes) behind, every `interval` s, from the two servers (module docstring)."""

    def __init__(self, primary_url: str, replica_url: str, interval: float) -> None:
        self.primary_url, self.replica_url, self.interval = primary_url, replica_url, interval
        self.written: list[tuple[float, int]] = []  # (monotonic time, primary LSN)
        self.lag_s: list[float] = []
        self.lag_bytes: list[int] = []

    def _seconds_behind(self, now: float, replayed: int) -> float:
        for at, lsn in self.written:
            if lsn > replayed:
                return now - at
        return 0.0

    async def run(self, stop: asyncio.Event) -> None:
        primary, replica = await asyncpg.connect(self.primary_url), await asyncpg.connect(self.replica_url)
        try:
            while not stop.is_set():  # bounded by the ingest that sets `stop`
                now = time.monotonic()
                written = int(await primary.fetchval(WRITTEN))
                replayed = int(await replica.fetchval(REPLAYED))
                self.written.append((now, written))
                self.lag_bytes.append(max(0, written - replayed))
                self.lag_s.append(self._seconds_behind(now, replayed))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.interval)
        finally:
            await primary.close()
            await replica.close()

    def summary(self) -> dict[str, Any]:
        if not self.lag_s:
            return {"samples": 0}
        return {
            "samples": len(self.lag_s),
            "lag_s_p50": round(float(np.percentile(self.lag_s, 50)), 3),
            "lag_s_p95": round(float(np.percentile(self.lag_s, 95)), 3),
            "lag_s_max": round(max(self.lag_s), 3),
            "lag_kb_p95": round(float(np.percentile(self.lag_bytes, 95)) / 1024, 1),
            "lag_kb_max": round(max(self.lag_bytes) / 1024, 1),
        }


async def _ingest_leg(
    base: str, key: str, bodies: list[Any], options: ReplicaBenchOptions, url: str, replica_url: str
) -> dict[str, Any]:
    sampler = LagSampler(url, replica_url, options.sample_s)
    stop = asyncio.Event()
    sampling = asyncio.create_task(sampler.run(stop))
    limits = httpx.Limits(max_connections=options.ingest_clients)
    headers = {"Authorization": f"Bearer {key}"}
    try:
        async with httpx.AsyncClient(base_url=base, headers=headers, limits=limits) as client:
            run = await store_batches(client, bodies, options.ingest_clients, options.ingest_rate)
    finally:
        stop.set()
        await sampling
    failed = [s for s in run.samples if s.error is not None]
    accepted = sum(s.size for s in run.samples if s.error is None)
    return {
        "memories_sent": sum(len(b) for b in bodies),
        "target_per_s": options.ingest_rate,
        "accepted": accepted,
        "failed_requests": len(failed),
        "seconds": round(run.wall_s, 2),
        "accepted_per_s": round(accepted / run.wall_s, 1) if run.wall_s else None,
        "lag": sampler.summary(),
    }


async def _key(url: str) -> str:
    await bench_user(url, USER)
    conn = await asyncpg.connect(url)
    try:
        return (await create_key(conn, USER, label="bench replica")).key
    finally:
        await conn.close()


async def _run(url: str, replica: Replica, options: ReplicaBenchOptions, console: Console) -> dict[str, Any]:
    pool = load_pool(options.sentences)
    memories = list(generate_memories(pool, options.memories + options.ingest_memories, 1, options.seed))
    load, ingest = memories[: options.memories], memories[options.memories :]
    queries = [pool.held_out[i % len(pool.held_out)] for i in range(max(options.requests, 20))]
    database = urlsplit(url).path.lstrip("/")
    replica_url = replica.url(database)
    key = await _key(url)
    env = {"MEMORIA_DATABASE__URL": url}
    report: dict[str, Any] = {}
    async with served_api(env, "--no-migrate", unset=[READ_URL]) as api:
        console.print(f"loading {len(load):,} memories (primary alone)")
        headers = {"Authorization": f"Bearer {key}"}
        async with httpx.AsyncClient(base_url=api.base, headers=headers, timeout=120) as client:
            stored = await store_batches(client, batch_bodies(load, options.batch), 2)
        if any(s.error for s in stored.samples):
            raise RuntimeError("the load had failed store requests")
        await asyncio.to_thread(replica.wait_caught_up)
        console.print(f"recall, primary alone: {options.requests} requests at {options.concurrencies}")
        report["primary_alone"] = await _recall_leg(api.base, key, queries, options, replica_url)
    metrics_token = secrets.token_urlsafe(16)
    with_replica = {**env, READ_URL: replica_url, "MEMORIA_METRICS__TOKEN": metrics_token}
    async with served_api(with_replica, "--no-migrate") as api:
        console.print(f"recall, primary + replica: {options.requests} requests at {options.concurrencies}")
        report["with_replica"] = await _recall_leg(api.base, key, queries, options, replica_url)
        console.print(
            f"read-your-writes: {options.ryw_rounds} rounds of store, recall at once, "
            f"recall {options.ryw_gap_s:g} s later"
        )
        report["read_your_writes"] = await read_your_writes_leg(
            api.base, key, metrics_token, options.ryw_rounds, options.ryw_gap_s
        )
        pace = f"at {options.ingest_rate:g}/s" if options.ingest_rate else "as fast as taken"
        console.print(
            f"ingest: {len(ingest):,} memories in batches of {options.batch} {pace}, "
            f"{options.ingest_clients} clients, lag sampled every {options.sample_s * 1000:.0f} ms"
        )
        report["ingest"] = await _ingest_leg(
            api.base, key, batch_bodies(ingest, options.batch), options, url, replica_url
        )
    conn = await asyncpg.connect(url)
    try:  # the served process's model, as it recorded it (`+int8` for the quantized local model)
        report["embedding_models"] = await conn.fetchval(EMBEDDING_MODELS)
    finally:
        await conn.close()
    return report


def bench_replica(options: ReplicaBenchOptions, console: Console) -> dict[str, Any]:
    """The report: a primary and its replica in a temporary folder, deleted afterwards."""
    loadavg = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="memoria-bench-replica-") as tmp:
        os.chmod(tmp, 0o755)  # noqa: S103 - the embedded server runs as another user when we are root
        server = start_server(Path(tmp) / "pgdata", options.shared_buffers, cleanup_mode="delete")
        try:
            with scratch_database(server.get_uri(), options.dimension) as (url, _):
                replica = Replica.start(server, Path(tmp) / "replica")
                try:
                    figures = asyncio.run(_run(url, replica, options, console))
                finally:
                    replica.destroy()
        finally:
            server.cleanup()
    return {
        "options": {
            "memories": options.memories,
            "requests": options.requests,
            "concurrencies": list(options.concurrencies),
            "ingest_memories": options.ingest_memories,
            "ingest_clients": options.ingest_clients,
            "ingest_rate": options.ingest_rate,
            "ryw_rounds": options.ryw_rounds,
            "ryw_gap_s": options.ryw_gap_s,
            "batch": options.batch,
            "sample_ms": round(options.sample_s * 1000),
            "sentences": str(options.sentences),
            "recall": "HTTP to a real `memoria serve` (one process per leg)",
        },
        **figures,
        "cpus": os.cpu_count(),
        "loadavg_start": [round(v, 2) for v in loadavg],
    }


def print_report(report: dict[str, Any], console: Console) -> None:
    table = Table(title="recall over HTTP: primary alone vs primary + replica")
    for column in ("leg", "concurrency", "p50 ms", "p95 ms", "req/s", "replica transactions"):
        table.add_column(column)
    for leg in ("primary_alone", "with_replica"):
        figures = report[leg]
        for name, run in figures.items():
            if name.startswith("c="):
                table.add_row(
                    leg,
                    name,
                    f"{run['p50']:.1f}",
                    f"{run['p95']:.1f}",
                    f"{run['per_second']:.1f}",
                    str(figures["replica_transactions"]),
                )
    console.print(table)
    ryw = report.get("read_your_writes")
    if ryw:
        for when, said in (("immediate", "at once"), ("later", f"{ryw['gap_s']:g} s later")):
            figures = ryw[when]
            latency = figures["latency_ms"]
            console.print(
                f"read-your-writes, recall {said}: "
                f"found {figures['found']}/{figures['recalls']}, read on the primary "
                f"{figures['read_on_primary']}, on the replica {figures['read_on_replica']}; "
                f"p50 {latency.get('p50')} ms, p95 {latency.get('p95')} ms"
            )
    ingest = report["ingest"]
    lag = ingest["lag"]
    console.print(
        f"ingest: {ingest['accepted']:,} memories at {ingest['accepted_per_s']}/s "
        f"(target {ingest.get('target_per_s') or 'none: a flood'}) "
        f"({ingest['failed_requests']} failed requests); replica lag p50 {lag.get('lag_s_p50')} s, "
        f"p95 {lag.get('lag_s_p95')} s, max {lag.get('lag_s_max')} s "
        f"({lag.get('lag_kb_max')} kB behind at most, {lag.get('samples')} samples); "
        f"embedded by {report.get('embedding_models')}"
    )
