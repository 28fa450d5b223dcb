"""Shared pieces of the offline embedding jobs (`memoria embeddings backfill` / `reembed`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import asyncpg
from pgvector import HalfVector
from pgvector.asyncpg import register_vector

from app.db.queries import Executor
from app.embeddings.base import EmbeddingError
from app.embeddings.inputs import TurnContext, embedding_inputs
from app.embeddings.sensitive import SensitiveRouter


class JobError(RuntimeError):
    """The job cannot run or stopped; the message says what to do. Re-running resumes."""


class Progress(Protocol):
    def start(self, phase: str, total: int) -> None: ...

    def advance(self, done: int) -> None: ...


class NoProgress:
    def start(self, phase: str, total: int) -> None:
        pass

    def advance(self, done: int) -> None:
        pass


async def connect(url: str) -> asyncpg.Connection:
    """A plain (non-pooled) connection with the pgvector codecs; jobs need session state."""
    conn = await asyncpg.connect(url)
    await register_vector(conn)
    return conn


async def read_meta(conn: asyncpg.Connection, key: str) -> str | None:
    value = await conn.fetchval("SELECT value FROM memoria_meta WHERE key = $1", key)
    return None if value is None else str(value)


async def write_meta(conn: asyncpg.Connection, key: str, value: str) -> None:
    await conn.execute(
        "INSERT INTO memoria_meta (key, value) VALUES ($1, $2) "
        "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        key,
        value,
    )


async def recorded_dimension(conn: asyncpg.Connection) -> int:
    value = await read_meta(conn, "embedding_dimension")
    if value is None:
        raise JobError("the database has no Memoria schema: run `memoria migrate` first")
    return int(value)


VectorWrite = tuple[int, HalfVector, str, bytes]
"""(memory id, vector, model id, the content hash the vector was computed from)."""


async def embed_rows(
    conn: Executor, router: SensitiveRouter, rows: Sequence[asyncpg.Record], context: TurnContext
) -> list[VectorWrite]:
    """Embed the memories of `rows` (their `id`s) as the embedding-input rule says
    (app.embeddings.inputs), honouring `is_sensitive`; EmbeddingError stops the job. A memory gone
    meanwhile, or sensitive without an in-process model, gets no vector."""
    inputs = await embedding_inputs(
        conn, [r["id"] for r in rows], context, sensitive_ok=router.sensitive_model_id is not None
    )
    results = await router.embed_for_storage(
        [r["input"] for r in inputs], [r["is_sensitive"] for r in inputs]
    )
    return [
        (row["id"], HalfVector(result.vector), result.model_id, row["content_hash"])
        for row, result in zip(inputs, results, strict=True)
        if result is not None
    ]


async def embed_pending(
    conn: asyncpg.Connection,
    router: SensitiveRouter,
    *,
    count_sql: str,
    next_sql: str,
    write_sql: str,
    batch_size: int,
    progress: Progress,
    phase: str,
    context: TurnContext,
) -> int:
    """The resumable loop both jobs share: keyset batches of rows still to embed, written as they come.

    `count_sql(sensitive_ok)`, `next_sql(sensitive_ok, after_id, limit)` select the work (their
    `id`s); `write_sql(id, vector, model, content_hash)` stores one result; `context`: what captured
    turns are embedded with. Returns the rows embedded.
    """
    sensitive_ok = router.sensitive_model_id is not None
    progress.start(phase, int(await conn.fetchval(count_sql, sensitive_ok)))
    embedded, last_id = 0, 0
    while rows := await conn.fetch(next_sql, sensitive_ok, last_id, batch_size):
        try:
            writes = await embed_rows(conn, router, rows, context)
        except EmbeddingError as exc:
            raise JobError(f"stopped before memory {rows[0]['id']}: {exc}; re-run to continue") from exc
        await conn.executemany(write_sql, writes)
        embedded += len(writes)
        last_id = rows[-1]["id"]
        progress.advance(len(rows))
    return embedded


def updated_count(status: str) -> int:
    """Rows touched, from an asyncpg status string such as 'UPDATE 42'."""
    return int(status.rsplit(" ", 1)[-1])
