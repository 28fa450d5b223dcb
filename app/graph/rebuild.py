"""Recompute the concept graph of some or all namespaces (after changing extractor settings).

Runs directly, batch by batch, not through the job queue: it is an operator's command that reports
progress and finishes when the graph is whole. Each batch completes the pending indexing jobs of its
memories (they are up to date), and jobs the worker runs meanwhile are idempotent.
"""

from __future__ import annotations

from collections.abc import Callable

import asyncpg

from app.embeddings import Embedder
from app.graph.indexer import GraphIndexer, lock_graph
from app.graph.settings import GraphSettings

_SCOPE = """
SELECT n.id FROM namespaces n JOIN users u ON u.id = n.user_id
WHERE ($1::text IS NULL OR n.name = $1) AND ($2::text IS NULL OR u.name = $2)
ORDER BY n.id
"""

_CLEAR = """
WITH gone AS (DELETE FROM concepts WHERE namespace_id = $1)
UPDATE namespaces SET graph_memories = 0 WHERE id = $1
"""

_LIVE_IDS = """
SELECT id FROM memories
WHERE namespace_id = $1 AND deleted_at IS NULL AND NOT is_sensitive AND id > $2
ORDER BY id LIMIT $3
"""


async def rebuild_graph(
    pool: asyncpg.Pool,
    settings: GraphSettings,
    embedder: Embedder | None,
    namespace: str | None = None,
    user: str | None = None,
    batch: int = 200,
    on_progress: Callable[[int, int], None] | None = None,
) -> tuple[int, int]:
    """Clear and re-extract; returns (namespaces, memories). `on_progress(done, total)` after each batch."""
    namespace_ids = [r["id"] for r in await pool.fetch(_SCOPE, namespace, user)]
    total = await pool.fetchval(
        "SELECT count(*) FROM memories "
        "WHERE namespace_id = ANY($1) AND deleted_at IS NULL AND NOT is_sensitive",
        namespace_ids,
    )
    indexer = GraphIndexer(pool, embedder, settings)
    done = 0
    for namespace_id in namespace_ids:
        async with pool.acquire() as conn, conn.transaction():
            await lock_graph(conn, {namespace_id})
            await conn.execute(_CLEAR, namespace_id)  # memory_concepts and edges go by cascade
        last = 0
        while ids := [r["id"] for r in await pool.fetch(_LIVE_IDS, namespace_id, last, batch)]:
            await indexer.index(ids)
            last = ids[-1]
            done += len(ids)
            if on_progress:
                on_progress(done, total)
    return len(namespace_ids), done
