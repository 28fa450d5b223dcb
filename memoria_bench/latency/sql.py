"""The recall statement alone: what the SQL costs, timed around the one statement the service runs.

asyncpg's query logger times the statement `RecallService.recall` sends, with the service's own
arguments, so the figure is production's statement, plan cache and SET LOCAL settings included,
without the HTTP stack or the query embedding (timed here separately, once per text).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from app.core.stats import latency_summary
from app.db import Database, create_database
from app.db.plans import StatementTimer
from app.embeddings import Embedder
from app.recall.sql import RECALL_STATEMENT
from memoria_bench.config import BenchConfig
from memoria_bench.latency.schedule import MODES, WARMUP, blocks, recall_request
from memoria_bench.latency.scopes import Scope
from memoria_bench.modes import ALL, embeds_query

PROFILED = 20  # statements per scope and mode kept for EXPLAIN ANALYZE (the per-CTE medians)


async def sql_latency(
    url: str, config: BenchConfig, embedder: Embedder, user_id: int, scope: Scope, queries: Sequence[str]
) -> dict[str, Any]:
    """Time the recall statement (not the embedding) as `RecallService.recall` runs it, per mode.

    Each query is embedded once first (timed: that is the embedding figure), so the service's own
    embedding is a cache hit and the statement gets exactly the arguments production would pass.
    Returns the statistics per mode, the embedding's, the slowest statement per mode and a sample
    of each mode's arguments for `explain.explain_profile`.
    """
    one = config.database.model_copy(update={"pool_min_size": 1, "pool_max_size": 1})
    db = await create_database(url, one)
    timer = StatementTimer(RECALL_STATEMENT)
    try:
        async with db.read.acquire() as conn:
            conn.add_query_logger(timer)  # stays on the pool's one connection
        service = config.recall_service(db, embedder)
        samples: dict[str, list[float]] = {mode: [] for mode in MODES}
        slowest: dict[str, tuple[float, tuple[Any, ...], str]] = {}
        sampled: dict[str, list[tuple[Any, ...]]] = {mode: [] for mode in MODES}
        every = max(1, (len(queries) - WARMUP) // PROFILED)
        embed_ms: list[float] = []
        for text in queries[:WARMUP]:
            for mode in MODES:
                await service.recall(user_id, recall_request(text, scope.namespace, mode))
        embedded: set[str] = set()
        # one text at a time through every mode: the differences between modes (what a leg costs)
        # then compare statements run moments apart, whatever the machine's load does meanwhile
        for mode, texts in blocks(queries[WARMUP:], list(MODES), size=1):
            for text in texts:
                if embeds_query(mode, config.recall, config.graph) and text not in embedded:
                    began = time.perf_counter()
                    await embedder.embed_query(text)
                    embed_ms.append((time.perf_counter() - began) * 1000.0)
                    embedded.add(text)
                timer.records.clear()
                await service.recall(user_id, recall_request(text, scope.namespace, mode))
                await asyncio.sleep(0)  # the logger callback runs on the next loop turn
                elapsed, args = timer.records[-1]
                samples[mode].append(elapsed)
                if len(samples[mode]) % every == 0 and len(sampled[mode]) < PROFILED:
                    sampled[mode].append(args)
                if elapsed > slowest.get(mode, (0.0,))[0]:
                    slowest[mode] = (elapsed, args, text)
    finally:
        await db.close()
    return {
        "stats": {mode: latency_summary(values) for mode, values in samples.items()},
        "embed": latency_summary(embed_ms),
        "slowest": slowest,
        "sampled": sampled,
    }


async def warm_caches(
    db: Database, embedder: Embedder, config: BenchConfig, user_id: int, scope: Scope, texts: Sequence[str]
) -> None:
    """Recall `texts` over every leg, untimed: see `options.CACHE_WARMUP`."""
    service = config.recall_service(db, embedder)
    for text in texts:
        await service.recall(user_id, recall_request(text, scope.namespace, ALL))
