"""Embed memories stored without a vector (provider outage, sensitive rows, imports).

Resumable by construction: it only picks rows whose embedding is NULL, in id order, so a re-run
after a failure continues where the last one stopped.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from app.embeddings.jobs import JobError, Progress, embed_pending, read_meta, recorded_dimension
from app.embeddings.sensitive import SensitiveRouter

_PENDING = """
FROM memories
WHERE embedding IS NULL AND deleted_at IS NULL AND (NOT is_sensitive OR $1)
"""
COUNT_PENDING = "SELECT count(*) " + _PENDING
NEXT_BATCH = (
    "SELECT id, content, is_sensitive, content_hash " + _PENDING + " AND id > $2 ORDER BY id LIMIT $3"
)
# Skip rows embedded or edited meanwhile by the live service.
WRITE = """
UPDATE memories SET embedding = $2, embedding_model = $3
WHERE id = $1 AND embedding IS NULL AND content_hash = $4
"""
COUNT_SENSITIVE_LEFT = (
    "SELECT count(*) FROM memories WHERE embedding IS NULL AND deleted_at IS NULL AND is_sensitive"
)


@dataclass(frozen=True, slots=True)
class BackfillReport:
    embedded: int
    sensitive_left: int


async def check_target(conn: asyncpg.Connection, router: SensitiveRouter) -> None:
    """Never write vectors of another width or another model's space into the column."""
    dimension = await recorded_dimension(conn)
    if dimension != router.dimension:
        raise JobError(
            f"the database stores {dimension}-d embeddings but {router.model_id} produces "
            f"{router.dimension}-d ones: use `memoria embeddings reembed`"
        )
    model = await read_meta(conn, "embedding_model")
    if model is not None and model != router.model_id:
        raise JobError(
            f"the database holds {model} embeddings, not {router.model_id}: use `memoria embeddings reembed`"
        )


async def backfill(
    conn: asyncpg.Connection, router: SensitiveRouter, *, batch_size: int, progress: Progress
) -> BackfillReport:
    await check_target(conn, router)
    sensitive_ok = router.sensitive_model_id is not None
    embedded = await embed_pending(
        conn,
        router,
        count_sql=COUNT_PENDING,
        next_sql=NEXT_BATCH,
        write_sql=WRITE,
        batch_size=batch_size,
        progress=progress,
        phase="backfill",
    )
    left = 0 if sensitive_ok else int(await conn.fetchval(COUNT_SENSITIVE_LEFT))
    return BackfillReport(embedded=embedded, sensitive_left=left)
