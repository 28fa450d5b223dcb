"""`memoria bench extraction`: what concept extraction costs per memory, as the store path runs it."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from app.core.stats import latency_summary
from app.db import Database
from app.embeddings import Embedder
from app.graph.extract import extract_concepts
from app.memories.schemas import MemoryIn
from memoria_bench.config import BenchConfig
from memoria_bench.quality import read_benchmark


async def bench_extraction(
    config: BenchConfig, embedder: Embedder, db: Database, user_id: int, data: Path, corpus: str, limit: int
) -> dict[str, Any]:
    """Time `extract_concepts` alone and the whole per-memory graph write (one memory per call, as
    the API's after-commit task does for a single store)."""
    rows = read_benchmark(data, corpus).rows[:limit]
    pure = []
    for row in rows:
        start = time.perf_counter()
        extract_concepts(row["content"], max_concepts=config.graph.max_concepts_per_memory)
        pure.append((time.perf_counter() - start) * 1000)

    memories = config.memory_service(db, embedder)
    ids: list[int] = []
    for start_at in range(0, len(rows), 100):
        chunk = rows[start_at : start_at + 100]
        stored = await memories.store(
            user_id, [MemoryIn(content=r["content"], namespace=r["namespace"]) for r in chunk]
        )
        ids += await memories.internal_ids([r.id for r in stored if not r.duplicate])  # the graph's ids
    indexer = config.graph_indexer(db, embedder)
    written = []
    for memory_id in ids:
        start = time.perf_counter()
        await indexer.index([memory_id], fresh=True)
        written.append((time.perf_counter() - start) * 1000)
    return {
        "corpus": corpus,
        "extract_concepts_ms": latency_summary(pure),
        "index_one_memory_with_db_writes_ms": latency_summary(written),
    }
