"""Shared pieces of the offline embedding jobs (`memoria embeddings backfill` / `reembed`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import asyncpg
from pgvector import HalfVector
from pgvector.asyncpg import register_vector

from app.embeddings.base import EmbeddingError
from app.embeddings.sensitive import Embedded, SensitiveRouter


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


async def embed_rows(router: SensitiveRouter, rows: Sequence[asyncpg.Record]) -> list[Embedded | None]:
    """Embed `content` of rows, honouring `is_sensitive`; EmbeddingError stops the job."""
    return await router.embed_for_storage([r["content"] for r in rows], [r["is_sensitive"] for r in rows])


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
) -> int:
    """The resumable loop both jobs share: keyset batches of rows still to embed, written as they come.

    `count_sql(sensitive_ok)`, `next_sql(sensitive_ok, after_id, limit)` select the work;
    `write_sql(id, vector, model, content_hash)` stores one result. Returns the rows embedded.
    """
    sensitive_ok = router.sensitive_model_id is not None
    progress.start(phase, int(await conn.fetchval(count_sql, sensitive_ok)))
    embedded, last_id = 0, 0
    while rows := await conn.fetch(next_sql, sensitive_ok, last_id, batch_size):
        try:
            results = await embed_rows(router, rows)
        except EmbeddingError as exc:
            raise JobError(f"stopped before memory {rows[0]['id']}: {exc}; re-run to continue") from exc
        writes = [
            (row["id"], HalfVector(result.vector), result.model_id, row["content_hash"])
            for row, result in zip(rows, results, strict=True)
            if result is not None
        ]
        await conn.executemany(write_sql, writes)
        embedded += len(writes)
        last_id = rows[-1]["id"]
        progress.advance(len(rows))
    return embedded


def updated_count(status: str) -> int:
    """Rows touched, from an asyncpg status string such as 'UPDATE 42'."""
    return int(status.rsplit(" ", 1)[-1])
