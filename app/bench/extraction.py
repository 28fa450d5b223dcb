"""`memoria bench extraction`: what concept extraction costs per memory, as the store path runs it."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from app.bench.quality import load_corpus
from app.db import Database
from app.embeddings import Embedder
from app.graph.extract import extract_concepts
from app.graph.indexer import GraphIndexer
from app.memories.schemas import MemoryIn
from app.memories.service import MemoryService
from app.settings import Settings


def _percentiles(samples_ms: list[float]) -> dict[str, float]:
    p50, p95, p99 = np.percentile(samples_ms, [50, 95, 99])
    return {
        "n": len(samples_ms),
        "p50_ms": round(float(p50), 3),
        "p95_ms": round(float(p95), 3),
        "p99_ms": round(float(p99), 3),
    }


async def bench_extraction(
    settings: Settings, embedder: Embedder, db: Database, user_id: int, data: Path, corpus: str, limit: int
) -> dict[str, Any]:
    """Time `extract_concepts` alone and the whole per-memory graph write (one memory per call, as
    the API's after-commit task does for a single store)."""
    rows = load_corpus(data, corpus).rows[:limit]
    pure = []
    for row in rows:
        start = time.perf_counter()
        extract_concepts(row["content"], max_concepts=settings.graph.max_concepts_per_memory)
        pure.append((time.perf_counter() - start) * 1000)

    memories = MemoryService(db, embedder, settings.memories)
    ids: list[int] = []
    for start_at in range(0, len(rows), 100):
        chunk = rows[start_at : start_at + 100]
        stored = await memories.store(
            user_id, [MemoryIn(content=r["content"], namespace=r["namespace"]) for r in chunk]
        )
        ids += [r.id for r in stored if not r.duplicate]
    indexer = GraphIndexer(db.write, embedder if settings.graph.concept_embeddings else None, settings.graph)
    written = []
    for memory_id in ids:
        start = time.perf_counter()
        await indexer.index([memory_id], fresh=True)
        written.append((time.perf_counter() - start) * 1000)
    return {
        "corpus": corpus,
        "extract_concepts": _percentiles(pure),
        "index_one_memory_with_db_writes": _percentiles(written),
    }
