"""Putting the synthetic corpus into the database through the product's own write paths.

Memories go in through `MemoryService.store` (real embeddings) and concepts through the store
route's `GraphIndexer`, so the table, its GIN and HNSW indexes, the concept graph and the planner
statistics look like production's. Both loads resume where an interrupted run stopped.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from app.db import Database
from app.embeddings import Embedder
from app.memories.schemas import MemoryIn
from app.memories.service import MemoryService
from app.memories.settings import MemorySettings
from app.namespaces.settings import NamespaceSettings
from memoria_bench.config import BenchConfig
from memoria_bench.corpus import SyntheticMemory
from memoria_bench.latency.scopes import live_counts

BATCH = 100
BUILD_TIMEOUT_S = 6 * 3600.0  # VACUUM and ANALYZE of a million rows outlast the pool's 10 s command timeout
LOAD_WORKERS = 2  # one batch embeds while the other inserts


def memory_in(memory: SyntheticMemory) -> MemoryIn:
    """The store request item for one synthetic memory."""
    return MemoryIn(
        content=memory.content,
        namespace=memory.namespace,
        category=memory.category,
        tags=memory.tags,
        importance=memory.importance,
    )


def corpus_namespaces(memories: Sequence[SyntheticMemory]) -> NamespaceSettings:
    """The namespace cap the benchmark's user loads under: the product's, or the corpus's namespace
    count when that is more (`--namespaces` may time scopes past the default cap)."""
    wanted = len({m.namespace for m in memories})
    return NamespaceSettings(max_per_user=max(NamespaceSettings().max_per_user, wanted))


async def store_corpus(
    db: Database,
    embedder: Embedder,
    settings: MemorySettings,
    user_id: int,
    memories: Sequence[SyntheticMemory],
    console: Console,
) -> dict[str, Any]:
    """Store `memories` through `MemoryService.store`, resuming a load that was cut off."""
    have = sum((await live_counts(db.write, user_id)).values())
    if have >= len(memories):
        return {"stored_now": 0, "seconds": 0.0}
    service = MemoryService(db, embedder, settings, namespaces=corpus_namespaces(memories))
    # Batches commit whole, LOAD_WORKERS at a time, so all but the last few batches before `have`
    # are stored; storing those again answers `duplicate` without embedding anything.
    start = max(0, have // BATCH - LOAD_WORKERS) * BATCH
    offsets = iter(range(start, len(memories), BATCH))
    stored = 0
    began = time.perf_counter()
    with Progress(*_progress_columns(), console=console) as progress:
        task = progress.add_task("storing memories", total=len(memories), completed=start)

        async def worker() -> None:
            nonlocal stored
            for offset in offsets:
                chunk = memories[offset : offset + BATCH]
                results = await service.store(user_id, [memory_in(m) for m in chunk])
                stored += sum(not r.duplicate for r in results)
                progress.advance(task, len(chunk))
                if not console.is_terminal and (offset // BATCH) % 50 == 0:  # a log file sees no bar
                    rate = stored / (time.perf_counter() - began)
                    console.print(f"stored {offset + len(chunk):,} of {len(memories):,} ({rate:.0f}/s)")

        await asyncio.gather(*(worker() for _ in range(LOAD_WORKERS)))
    seconds = time.perf_counter() - began
    # Planner statistics and the visibility map, as autovacuum would leave them on a live system.
    await db.write.execute("VACUUM (ANALYZE) memories", timeout=BUILD_TIMEOUT_S)
    return {"stored_now": stored, "seconds": round(seconds, 1), "per_second": round(stored / seconds, 1)}


_LAST_LINKED = """
SELECT coalesce(max(mc.memory_id), 0) FROM memory_concepts mc
JOIN concepts c ON c.id = mc.concept_id JOIN namespaces n ON n.id = c.namespace_id
WHERE n.user_id = $1
"""
_TO_LINK = """
SELECT m.id FROM memories m JOIN namespaces n ON n.id = m.namespace_id
WHERE n.user_id = $1 AND m.id > $2 AND m.deleted_at IS NULL ORDER BY m.id
"""


async def index_concepts(
    db: Database, embedder: Embedder, config: BenchConfig, user_id: int, console: Console
) -> dict[str, Any]:
    """Extract concepts batch by batch in store order with the store route's indexer (concept
    embeddings only when `graph.concept_embeddings` is on), so the graph leg walks the graph the
    product would have built. Resumes after the highest memory id already linked: the memories
    after it have no links yet, so they are indexed as fresh, as the store route indexes them."""
    if not config.graph.enabled:
        return {"indexed_now": 0}
    indexer = config.graph_indexer(db, embedder)
    after = await db.write.fetchval(_LAST_LINKED, user_id)
    ids = [r["id"] for r in await db.write.fetch(_TO_LINK, user_id, after)]
    if not ids:
        return {"indexed_now": 0}
    began = time.perf_counter()
    with Progress(*_progress_columns(), console=console) as progress:
        task = progress.add_task("extracting concepts", total=len(ids))
        for start in range(0, len(ids), BATCH):
            await indexer.index(ids[start : start + BATCH], fresh=True)
            progress.advance(task, len(ids[start : start + BATCH]))
            if not console.is_terminal and (start // BATCH) % 50 == 0:
                console.print(f"indexed concepts of {start + BATCH:,} of {len(ids):,} memories")
    seconds = time.perf_counter() - began
    await db.write.execute(
        "ANALYZE concepts, memory_concepts, concept_edges, namespaces", timeout=BUILD_TIMEOUT_S
    )
    return {
        "indexed_now": len(ids),
        "seconds": round(seconds, 1),
        "concept_embeddings": config.graph.concept_embeddings,
    }


def _progress_columns() -> tuple[ProgressColumn, ...]:
    return (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
