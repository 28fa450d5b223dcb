"""One `memoria bench ingest` run: a `memoria serve` on the scratch database (its defaults, so the
graph on, and `Server-Timing`), an untimed warm-up, then the timed stores over HTTP while the jobs
table is watched, until the queue the stores filled is empty again.

Two rates come out of it. Accepted: memories the server answered 201 for, over the time from the
first request sent to the last answer. End to end: the same memories over the time from the first
request sent until the durable jobs the stores enqueued (concept indexing, term counting;
embedding, had the model failed) have all finished, which is when the last memory is fully in the
graph.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import httpx
from rich.console import Console

from app.auth.service import create_key
from app.core.stats import latency_summary
from app.embeddings.backfill import EMBED_JOB
from app.graph import INDEX_JOB
from app.recall.term_counts import TERM_COUNT_JOB
from memoria_bench.corpus import generate_memories, load_pool
from memoria_bench.ingest.hosted import hosted_embedder
from memoria_bench.ingest.jobs import JobWatch, job_ids_drawn, read_queue, wait_drained, watch_queue
from memoria_bench.ingest.load import StoreRun, batch_bodies, store_batches
from memoria_bench.ingest.options import TARGET_PER_S, IngestOptions
from memoria_bench.ingest.split import phase_split
from memoria_bench.latency.server import served_api
from memoria_bench.scratch import bench_user

USER = "bench-ingest"
WARMUP_NAMESPACE = "bench-warmup"
#: The jobs a store enqueues: what "end to end" waits for (the periodic expiry sweep is not one).
#: Term counting (a trigger's job, whether or not `lexical_idf` reads the counts) is one of them.
STORE_JOB_KINDS = (INDEX_JOB, TERM_COUNT_JOB, EMBED_JOB)

# What the timed stores left in the database (the warm-up's namespace aside), and which model embedded
# them (the served process's, as it recorded it: `+int8` for the quantized local model).
STORED = """
SELECT
    (SELECT count(*) FROM memories m JOIN namespaces n ON n.id = m.namespace_id
     WHERE n.user_id = $1 AND n.name <> $2) AS memories,
    (SELECT count(*) FROM memories m JOIN namespaces n ON n.id = m.namespace_id
     WHERE n.user_id = $1 AND n.name <> $2 AND m.embedding IS NOT NULL) AS embedded,
    (SELECT count(DISTINCT mc.memory_id) FROM memory_concepts mc JOIN memories m ON m.id = mc.memory_id
     JOIN namespaces n ON n.id = m.namespace_id WHERE n.user_id = $1 AND n.name <> $2) AS with_concepts,
    (SELECT count(*) FROM concepts c JOIN namespaces n ON n.id = c.namespace_id
     WHERE n.user_id = $1 AND n.name <> $2) AS concepts,
    (SELECT count(*) FROM concept_edges e JOIN namespaces n ON n.id = e.namespace_id
     WHERE n.user_id = $1 AND n.name <> $2) AS edges,
    (SELECT string_agg(DISTINCT m.embedding_model, ', ') FROM memories m
     JOIN namespaces n ON n.id = m.namespace_id
     WHERE n.user_id = $1 AND n.name <> $2) AS embedding_models
"""


async def _key(url: str) -> str:
    conn = await asyncpg.connect(url)
    try:
        return (await create_key(conn, USER, label="bench ingest")).key
    finally:
        await conn.close()


@asynccontextmanager
async def _embedder_env(options: IngestOptions) -> AsyncIterator[dict[str, str]]:
    """The served process's embedder: its own (no change), or the hosted stand-in while it runs."""
    if options.hosted_embedder_ms is None:
        yield {}
        return
    with hosted_embedder(options.dimension, options.hosted_embedder_ms) as env:
        yield env


def _refuse_errors(run: StoreRun, what: str) -> None:
    failed = [s for s in run.samples if s.error is not None]
    if failed:
        raise RuntimeError(
            f"{what}: {len(failed)} store requests failed, first: {failed[0].status} {failed[0].error}"
        )


async def _warm_up(
    client: httpx.AsyncClient, conn: asyncpg.Connection, bodies: list[Any], options: IngestOptions
) -> None:
    """Store the warm-up batches and wait for their jobs, so the timed run starts on a quiet queue."""
    _refuse_errors(await store_batches(client, bodies, options.concurrency), "warm-up")
    watch = JobWatch(STORE_JOB_KINDS, INDEX_JOB)
    deadline = time.perf_counter() + options.drain_timeout_s
    while (await read_queue(conn, watch)).pending:
        if time.perf_counter() > deadline:
            raise RuntimeError(f"the warm-up's jobs were not done in {options.drain_timeout_s} s")
        await asyncio.sleep(options.poll_s)


def _memories(run: StoreRun, sent: int) -> dict[str, int]:
    ok = [s for s in run.samples if s.error is None]
    return {
        "sent": sent,
        "accepted": sum(s.size for s in ok),
        "new": sum(s.new for s in ok),
        "duplicates": sum(s.duplicates for s in ok),
        "embedded": sum(s.embedded for s in ok),
    }


def _rate(count: int, seconds: float | None) -> float | None:
    return round(count / seconds, 1) if seconds else None


async def bench_ingest(url: str, options: IngestOptions, console: Console) -> dict[str, Any]:
    """The report of one run against a `memoria serve` on the migrated scratch database `url`."""
    loadavg_start = os.getloadavg()
    pool = load_pool(options.sentences)
    warm_count = options.warmup_batches * options.batch
    generated = list(generate_memories(pool, warm_count + options.memories, options.namespaces, options.seed))
    warm, timed = generated[:warm_count], generated[warm_count:]
    bodies = batch_bodies(timed, options.batch)
    user_id = await bench_user(url, USER)
    key = await _key(url)
    limits = httpx.Limits(max_connections=options.concurrency, max_keepalive_connections=options.concurrency)
    headers = {"Authorization": f"Bearer {key}"}
    reader, watcher_conn = await asyncpg.connect(url), await asyncpg.connect(url)
    try:
        async with (
            _embedder_env(options) as embedder_env,
            served_api(url, embedder_env) as base,
            httpx.AsyncClient(base_url=base, headers=headers, limits=limits) as client,
        ):
            if warm:
                console.print(f"warm-up: {len(warm)} memories in {options.warmup_batches} batches (untimed)")
                await _warm_up(client, reader, batch_bodies(warm, options.batch, WARMUP_NAMESPACE), options)
            watch = JobWatch(STORE_JOB_KINDS, INDEX_JOB)
            drawn_before = await job_ids_drawn(reader)
            stop = asyncio.Event()
            watching = asyncio.create_task(watch_queue(watcher_conn, watch, options.poll_s, stop))
            try:
                console.print(
                    f"storing {options.memories:,} memories in {len(bodies)} batches of {options.batch}, "
                    f"{options.concurrency} in flight"
                )
                run = await store_batches(client, bodies, options.concurrency)
                console.print(f"stored in {run.wall_s:.1f} s; waiting for the jobs the stores enqueued")
                drained = await wait_drained(watch, run.ended, options.drain_timeout_s, options.poll_s)
            finally:
                stop.set()
                await watching
            drawn = await job_ids_drawn(reader) - drawn_before
        stored = dict(await reader.fetchrow(STORED, user_id, WARMUP_NAMESPACE) or {})
    finally:
        await reader.close()
        await watcher_conn.close()
    return _report(options, run, watch, drained.client_at if drained else None, drawn, stored, loadavg_start)


def _report(
    options: IngestOptions,
    run: StoreRun,
    watch: JobWatch,
    drained_at: float | None,
    drawn: int,
    stored: dict[str, Any],
    loadavg_start: tuple[float, float, float],
) -> dict[str, Any]:
    memories = _memories(run, options.memories)
    end_to_end_s = drained_at - run.began if drained_at is not None else None
    jobs = watch.summary()
    # the batches no read caught ran like the ones it did: the busy time of every job enqueued
    estimated = jobs["per_job_ms"] * drawn / 1000.0 if jobs["per_job_ms"] is not None else None
    jobs["busy_s_estimated_all"] = round(estimated, 3) if estimated is not None else None
    workers = options.served.get("jobs.workers")
    if end_to_end_s and estimated is not None and isinstance(workers, int) and workers > 0:
        jobs["worker_utilisation"] = round(estimated / (workers * end_to_end_s), 3)
    backlog = [o.pending for o in watch.observations if o.client_at >= run.ended]
    ok_ms = [s.client_ms for s in run.samples if s.error is None]
    throughput = {
        "http_s": round(run.wall_s, 3),
        "accepted_per_s": _rate(memories["accepted"], run.wall_s),
        "end_to_end_s": round(end_to_end_s, 3) if end_to_end_s is not None else None,
        "end_to_end_per_s": _rate(memories["accepted"], end_to_end_s),
        "drain_tail_s": round(drained_at - run.ended, 3) if drained_at is not None else None,
    }
    return {
        "options": {
            "memories": options.memories,
            "batch": options.batch,
            "concurrency": options.concurrency,
            "namespaces": options.namespaces,
            "warmup_batches": options.warmup_batches,
            "poll_ms": round(options.poll_s * 1000.0, 1),
            "hosted_embedder_ms": options.hosted_embedder_ms,
            "sentences": str(options.sentences),
        },
        "served": options.served,
        "requests": {
            "sent": len(run.samples),
            "ok": len(ok_ms),
            "errors": len(run.samples) - len(ok_ms),
            "statuses": dict(Counter(str(s.status) for s in run.samples)),
            "first_error": next((f"{s.status} {s.error}" for s in run.samples if s.error), None),
            "latency_ms": latency_summary(ok_ms, run.wall_s) if ok_ms else {"n": 0.0},
        },
        "memories": memories,
        "stored": stored,
        "throughput": throughput,
        "jobs": {
            "kinds": list(STORE_JOB_KINDS),
            "timed_kind": INDEX_JOB,
            "enqueued": drawn,
            "drained": drained_at is not None,
            "backlog_at_last_answer": backlog[0] if backlog else None,
            **jobs,
            "coverage": round(jobs["jobs_seen"] / drawn, 3) if drawn else None,
        },
        "split": phase_split(run.samples),
        "targets": [
            {
                "target": f"accepted over HTTP >= {TARGET_PER_S:.0f} memories/s",
                "met": (throughput["accepted_per_s"] or 0) >= TARGET_PER_S,
            },
            {
                "target": f"end to end (graph indexed) >= {TARGET_PER_S:.0f} memories/s",
                "met": (throughput["end_to_end_per_s"] or 0) >= TARGET_PER_S,
            },
        ],
        "machine": {"cpus": os.cpu_count(), "loadavg_start": loadavg_start, "loadavg_end": os.getloadavg()},
    }
