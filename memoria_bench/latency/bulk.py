"""Loading a big corpus fast: the store path's checks, the model in large batches, COPY, and the
vector and text indexes built once after the load instead of row by row.

The store path (`load.store_corpus`) writes every memory into the HNSW and GIN indexes as it goes,
most of a memory's SQL time, and embeds 100 texts per call; a million memories that way takes hours
on a small machine (docs/benchmarks/). Here every memory still goes through `MemoryService.prepare`
(the validation and credential redaction of every write), the model embeds 512 texts a batch, two
calls at once, while the previous batch is copied in, and for a load of `rebuild_at` rows or more
the big indexes are dropped first and built afterwards with `maintenance_work_mem` and a parallel
worker, which is how an index over a whole table is meant to be built. Not CONCURRENTLY: the scratch
database has no readers to spare. The rows are the ones the store route would write (same columns,
hashes, vectors, model id); the concept graph is indexed afterwards by the store route's own indexer
(`load.index_concepts`). Resumes where an interrupted load stopped: every batch commits whole, in
corpus order.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import asyncpg
from pgvector import HalfVector
from rich.console import Console

from app.db import Database
from app.embeddings import Embedder
from app.memories.service import MemoryService, content_hash
from app.memories.settings import MemorySettings
from memoria_bench.corpus import SyntheticMemory
from memoria_bench.latency.load import BUILD_TIMEOUT_S, corpus_namespaces, memory_in
from memoria_bench.latency.scopes import live_counts

BULK_BATCH = 512
EMBED_CALLS = 2  # model calls at once per batch (MAX_CONCURRENCY's default)
REBUILD_AT = 50_000
"""Rows a load must bring for the indexes to be dropped and built after it."""
MAINTENANCE_WORK_MEM = "2GB"  # the HNSW graph of a million 384-d halfvecs fits, so it is built in memory
PARALLEL_WORKERS = 1  # with the leader, both cores

# The indexes built after a big load, as the migrations create them (a test holds them to
# migrations/schema.sql): a load killed midway leaves them missing, and the next run builds them.
INDEXES = {
    "memories_embedding_hnsw_idx": "CREATE INDEX memories_embedding_hnsw_idx ON public.memories "
    "USING hnsw (embedding public.halfvec_cosine_ops) WITH (m='16', ef_construction='128')",
    "memories_search_idx": "CREATE INDEX memories_search_idx ON public.memories USING gin (search_vector)",
    "memories_scope_search_idx": "CREATE INDEX memories_scope_search_idx ON public.memories USING gin "
    "(public.memoria_scope_search(namespace_id, search_vector)) WHERE (deleted_at IS NULL)",
    "memories_scope_vectors_idx": "CREATE INDEX memories_scope_vectors_idx ON public.memories USING btree "
    "(namespace_id) INCLUDE (id, is_sensitive, embedding_model, embedding) "
    "WHERE ((deleted_at IS NULL) AND (embedding IS NOT NULL))",
}

COLUMNS = (
    "namespace_id", "content_hash", "content", "category", "tags", "importance",
    "is_sensitive", "embedding", "embedding_model",
)  # fmt: skip
"""What a synthetic memory sets; `metadata` keeps its default (a jsonb in binary COPY needs a codec
the pool's text one is not), so `_embedded` refuses a memory that has any."""


async def bulk_store(
    db: Database,
    embedder: Embedder,
    settings: MemorySettings,
    user_id: int,
    memories: Sequence[SyntheticMemory],
    console: Console,
    rebuild_at: int = REBUILD_AT,
) -> dict[str, Any]:
    """Load `memories` (resuming after those stored already); the seconds spent embedding, copying
    and building indexes."""
    have = sum((await live_counts(db.write, user_id)).values())
    todo = len(memories) - have
    if todo <= 0:
        began = time.perf_counter()
        async with db.write.acquire() as conn:  # a load cut off while the indexes were built
            built = await _build_missing_indexes(conn)
        seconds = round(time.perf_counter() - began, 1)
        return {
            "stored_now": 0,
            "seconds": seconds,
            "bulk": True,
            "indexes_rebuilt": built,
            "index_build_s": seconds,
        }
    service = MemoryService(db, embedder, settings, namespaces=corpus_namespaces(memories))
    spent = {"embed_s": 0.0, "copy_s": 0.0, "index_build_s": 0.0}
    began = time.perf_counter()
    async with db.write.acquire() as conn:
        async with conn.transaction():
            ns_ids = await service.writes.namespace_ids(
                conn, user_id, sorted({m.namespace for m in memories})
            )
        rebuild = todo >= rebuild_at
        if rebuild:
            for name in INDEXES:
                await conn.execute(f"DROP INDEX IF EXISTS {name}")
        pending = asyncio.ensure_future(_embedded(service, embedder, memories[have : have + BULK_BATCH]))
        try:
            for start in range(have, len(memories), BULK_BATCH):
                rows, embed_s = await pending
                spent["embed_s"] += embed_s
                after = start + BULK_BATCH
                if after < len(memories):  # the model works on the next batch while this one is copied
                    pending = asyncio.ensure_future(
                        _embedded(service, embedder, memories[after : after + BULK_BATCH])
                    )
                copied = time.perf_counter()
                records = [(ns_ids[namespace], *values) for namespace, values in rows]
                await conn.copy_records_to_table("memories", records=records, columns=COLUMNS)
                spent["copy_s"] += time.perf_counter() - copied
                if not console.is_terminal and (start // BULK_BATCH) % 20 == 0:
                    console.print(f"copied {start + len(rows):,} of {len(memories):,} memories")
        finally:
            pending.cancel()  # a no-op once awaited; after an error, the batch nobody will copy
            building = time.perf_counter()
            await _build_missing_indexes(conn)
            spent["index_build_s"] = time.perf_counter() - building
        await conn.execute("VACUUM (ANALYZE) memories", timeout=BUILD_TIMEOUT_S)
    seconds = time.perf_counter() - began
    return {
        "stored_now": todo,
        "seconds": round(seconds, 1),
        "per_second": round(todo / seconds, 1),
        "bulk": True,
        "indexes_rebuilt": rebuild,
        **{name: round(value, 1) for name, value in spent.items()},
    }


async def _embedded(
    service: MemoryService, embedder: Embedder, batch: Sequence[SyntheticMemory]
) -> tuple[list[tuple[str, tuple[Any, ...]]], float]:
    """The batch's rows (namespace name, the other COLUMNS) after the store path's checks and
    redaction, and the seconds the model took."""
    cleaned, redacted = service.prepare([memory_in(m) for m in batch])
    if any(r.secrets for r in redacted) or any(m.metadata for m in cleaned):
        # sealing originals (and metadata) is the store path's: refuse rather than drop them
        raise ValueError("the bulk load takes no memory holding a credential or metadata; store it instead")
    began = time.perf_counter()
    texts = [m.content for m in cleaned]
    # in EMBED_CALLS calls at once: one ONNX call does not keep both cores busy (a load at 126/s
    # with one call, the store path's two requests in flight reached 177/s)
    size = -(-len(texts) // EMBED_CALLS)
    parts = await asyncio.gather(
        *(embedder.embed_documents(texts[i : i + size]) for i in range(0, len(texts), size))
    )
    vectors = [vector for part in parts for vector in part]
    seconds = time.perf_counter() - began
    rows = [
        (
            m.namespace,
            (
                content_hash(m.content),
                m.content,
                m.category,
                m.tags,
                m.importance,
                m.is_sensitive,
                HalfVector(vector),
                embedder.model_id,
            ),
        )
        for m, vector in zip(cleaned, vectors, strict=True)
    ]
    return rows, seconds


async def _build_missing_indexes(conn: asyncpg.Connection) -> bool:
    """Build whichever of INDEXES is missing, in memory and with a parallel worker; whether one was."""
    present = {
        r["indexname"]
        for r in await conn.fetch("SELECT indexname FROM pg_indexes WHERE tablename = 'memories'")
    }
    missing = [sql for name, sql in INDEXES.items() if name not in present]
    if not missing:
        return False
    async with conn.transaction():
        await conn.execute(
            f"SET LOCAL maintenance_work_mem = '{MAINTENANCE_WORK_MEM}'; "
            f"SET LOCAL max_parallel_maintenance_workers = {PARALLEL_WORKERS}"
        )
        for sql in missing:
            await conn.execute(sql, timeout=BUILD_TIMEOUT_S)
    return True
