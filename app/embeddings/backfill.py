"""Embed memories stored without a vector (provider outage, sensitive rows, imports).

Two ways in. The service enqueues an `EMBED_JOB` for every memory it stored or changed without a
vector it was allowed to have (the provider failed); the worker pool runs them (`EmbeddingJobs`)
with backoff until the provider is back, and start-up reconciliation enqueues any such memory that
has no job (imports, rows a re-embed left, jobs that ran out of attempts). `memoria embeddings
backfill` does the same work directly, for an operator who wants it done now.

Sensitive memories reach only in-process models: with a hosted provider and no
`sensitive_local_model` they stay unembedded, get no job, and a job already queued for one ends
without embedding it, so nothing retries them forever.

The backfill is resumable by construction: it only picks rows whose embedding is NULL, in id order,
so a re-run after a failure continues where the last one stopped.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import asyncpg

from app.embeddings.base import Embedder, EmbeddingError
from app.embeddings.inputs import NO_CONTEXT, TurnContext
from app.embeddings.jobs import (
    JobError,
    Progress,
    VectorWrite,
    embed_pending,
    embed_rows,
    read_meta,
    recorded_dimension,
)
from app.embeddings.retry import TransientEmbeddingError
from app.embeddings.sensitive import SensitiveRouter, guarded
from app.jobs import BatchFailed, Job, NewJob, complete

EMBED_JOB = "embeddings.embed"

log = logging.getLogger(__name__)

AfterEmbedded = Callable[[asyncpg.Connection, Sequence[int]], Awaitable[None]]
"""Work another domain does on memories as soon as they have a vector, in the transaction that
writes it: `(conn, memory ids)` (the automatic supersede of captured episodes, app.links)."""

_PENDING = """
FROM memories
WHERE embedding IS NULL AND deleted_at IS NULL AND (NOT is_sensitive OR $1)
"""
COUNT_PENDING = "SELECT count(*) " + _PENDING
NEXT_BATCH = "SELECT id " + _PENDING + " AND id > $2 ORDER BY id LIMIT $3"
# Skip rows embedded or edited meanwhile by the live service; a row filled here needs its pending
# embedding jobs no more (the memory row is locked before its job rows, as everywhere).
WRITE = f"""
WITH filled AS (
    UPDATE memories SET embedding = $2, embedding_model = $3
    WHERE id = $1 AND embedding IS NULL AND content_hash = $4
    RETURNING id
)
DELETE FROM jobs WHERE kind = '{EMBED_JOB}' AND memory_id IN (SELECT id FROM filled)
"""

# The memories of a batch of jobs that still need a vector this process may compute.
JOB_ROWS = """
SELECT id
FROM memories
WHERE id = ANY($1::bigint[]) AND embedding IS NULL AND deleted_at IS NULL AND (NOT is_sensitive OR $2)
ORDER BY id
"""

# Start-up: jobs that ran out of attempts get a new round (the outage may be over), and every memory
# that should have a vector but has no job gets one. $1 is EMBED_JOB, $2 whether sensitive rows may
# be embedded. The CTE and the INSERT read one snapshot: a revived job still counts as a job.
RECONCILE = """
WITH revived AS (
    UPDATE jobs SET state = 'queued', attempts = 0, run_after = now(), updated_at = now()
    WHERE kind = $1 AND state = 'failed'
    RETURNING id
)
INSERT INTO jobs (kind, memory_id)
SELECT $1, m.id
FROM memories m
WHERE m.embedding IS NULL AND m.deleted_at IS NULL AND (NOT m.is_sensitive OR $2)
  AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.memory_id = m.id AND j.kind = $1)
ORDER BY m.id
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
    conn: asyncpg.Connection,
    router: SensitiveRouter,
    *,
    batch_size: int,
    progress: Progress,
    context: TurnContext = NO_CONTEXT,
) -> BackfillReport:
    """Embed every memory without a vector; `context`: what captured turns are embedded with (the
    service's setting, so that a backfilled vector is the one the service would have written)."""
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
        context=context,
    )
    left = 0 if sensitive_ok else int(await conn.fetchval(COUNT_SENSITIVE_LEFT))
    return BackfillReport(embedded=embedded, sensitive_left=left)


def embedding_job(memory_id: int, error: str | None = None) -> NewJob:
    """The job that embeds a memory stored or changed without a vector; `error`: the embedding just
    failed with it (that was the first attempt, so the job waits out a backoff before its next)."""
    return NewJob(EMBED_JOB, memory_id, failed_first_try=error)


def is_outage(exc: EmbeddingError) -> bool:
    """The provider gave up after its own retries (429, 5xx, timeouts, resets): no text's fault."""
    return isinstance(exc, TransientEmbeddingError) or isinstance(exc.__cause__, TransientEmbeddingError)


class EmbeddingJobs:
    """Handler of `EMBED_JOB` and its start-up reconciliation, with the service's embedder."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        embedder: Embedder,
        after_embedded: AfterEmbedded | None = None,
        context: TurnContext = NO_CONTEXT,
    ) -> None:
        """`after_embedded`: called with the memories given a vector, in the writing transaction (in
        a savepoint: its failure is logged and never costs the vectors). `context`: what captured
        turns are embedded with (`MEMORIA_EMBEDDINGS__TURN_CONTEXT_*`)."""
        self._pool = pool
        self._router = guarded(embedder)
        self._after_embedded = after_embedded
        self._context = context

    @property
    def _sensitive_ok(self) -> bool:
        return self._router.sensitive_model_id is not None

    async def run(self, jobs: Sequence[Job]) -> None:
        """Embed the jobs' memories outside any transaction, then write the vectors and complete
        the jobs in one. A memory deleted, changed (its own job follows), already embedded, or
        sensitive without a local model ends its job without a vector. During a provider outage
        the whole batch backs off together."""
        rows = await self._pool.fetch(JOB_ROWS, [job.memory_id for job in jobs], self._sensitive_ok)
        writes: list[VectorWrite] = []
        if rows:
            try:
                writes = await embed_rows(self._pool, self._router, rows, self._context)
            except EmbeddingError as exc:
                if is_outage(exc) and len(jobs) > 1:
                    raise BatchFailed(str(exc)) from exc
                raise
        async with self._pool.acquire() as conn, conn.transaction():
            if writes:
                await conn.executemany(WRITE, writes)  # memory rows in id order, each before its jobs
                await self._then(conn, [memory_id for memory_id, *_ in writes])
            await complete(conn, jobs)

    async def _then(self, conn: asyncpg.Connection, memory_ids: list[int]) -> None:
        if self._after_embedded is None:
            return
        try:
            async with conn.transaction():
                await self._after_embedded(conn, memory_ids)
        except Exception:  # the vectors matter more than what follows them
            log.warning("the work after embedding %d memories failed", len(memory_ids), exc_info=True)

    async def reconcile(self, conn: asyncpg.Connection) -> None:
        await conn.execute(RECONCILE, EMBED_JOB, self._sensitive_ok)
