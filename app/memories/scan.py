"""Find memories stored in clear before redaction existed, and redact them in place
(`memoria secrets scan [--apply]`).

Batched by id, one transaction per batch of memories that hold credentials: an interruption loses
at most the batch in flight and a re-run finds only what is left. Each changed memory is redacted
exactly as a PATCH would (every free-text field, one numbering after the placeholders it holds),
its originals sealed in the same transaction when a key is configured, its vector dropped (it was
computed on the clear text) and its concept links replaced by durable jobs: concept indexing and
embedding, run by the server's workers. A live memory whose redacted text duplicates another live
memory of its namespace is deleted (soft), as a store of it would have answered `duplicate`.

The scan reads outside any transaction, so it costs the table a sequential read and nothing else;
only memories with credentials are locked, after their namespaces' graph locks (the lock order of
every graph writer).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import asyncpg

from app.embeddings.backfill import embedding_job
from app.errors import InvalidInput
from app.graph import indexing_jobs, lock_graph, unlink_memories
from app.jobs import JobQueue, JobSettings, NewJob
from app.memories import queries as q
from app.memories.redaction import TEXT_FIELDS, RedactedFields, check_stored_bounds, redact_fields
from app.memories.writing import content_hash
from app.secrets import SealedSecret, Vault, insert_sealed


@dataclass(slots=True)
class ScanReport:
    scanned: int = 0
    found: int = 0
    """Memories holding at least one credential in clear."""
    redacted: int = 0
    merged: int = 0
    """Of `redacted`: live memories deleted because, redacted, they duplicate another live one."""
    sealed: int = 0
    """Originals sealed (0 without a key: they are kept nowhere)."""
    too_long: int = 0
    """Memories left in clear because placeholders would push a value past its column's bound."""


def _redacted(row: asyncpg.Record) -> RedactedFields | None:
    """The row's fields redacted, or None when it holds no credential in clear."""
    result = redact_fields({name: row[name] for name in TEXT_FIELDS})
    return result if result.secrets else None


class Scanner:
    def __init__(self, pool: asyncpg.Pool, vault: Vault, jobs: JobQueue | None = None) -> None:
        self._pool = pool
        self._vault = vault
        self._jobs = jobs if jobs is not None else JobQueue(JobSettings())

    async def scan(
        self, *, apply: bool, batch_size: int, progress: Callable[[ScanReport], None] | None = None
    ) -> ScanReport:
        report = ScanReport()
        after = 0
        while True:
            rows = await q.ScanBatch(after_id=after, limit=batch_size).fetch(self._pool)
            if not rows:
                return report
            after = rows[-1]["id"]
            report.scanned += len(rows)
            found = [row for row in rows if _redacted(row) is not None]
            report.found += len(found)
            if apply and found:
                await self._apply(found, report)
            if progress is not None:
                progress(report)

    async def _apply(self, candidates: Sequence[asyncpg.Record], report: ScanReport) -> None:
        sealed: list[SealedSecret] = []
        jobs: list[NewJob] = []
        async with self._pool.acquire() as conn, conn.transaction():
            await lock_graph(conn, {row["namespace_id"] for row in candidates})
            locked = await q.ScanLock(memory_ids=[row["id"] for row in candidates]).fetch(conn)
            changes = [(row, result) for row in locked if (result := _redacted(row)) is not None]
            fitting = []
            for row, result in changes:
                try:
                    check_stored_bounds(result.fields)
                except InvalidInput:
                    report.too_long += 1
                    continue
                fitting.append((row, result))
            await unlink_memories(conn, [row["id"] for row, _ in fitting if not row["deleted"]])
            for row, result in fitting:
                fields = result.fields
                new_hash = content_hash(fields["content"])
                twin = None
                if not row["deleted"]:
                    twin = await q.LiveTwin(
                        namespace_id=row["namespace_id"], content_hash=new_hash, memory_id=row["id"]
                    ).fetchval(conn)
                await q.RedactStored(
                    content=fields["content"],
                    category=fields["category"],
                    tags=fields["tags"],
                    expanded_keywords=fields["expanded_keywords"],
                    source=fields["source"],
                    metadata=fields["metadata"],
                    content_hash=new_hash,
                    duplicate=twin is not None,
                    memory_id=row["id"],
                ).execute(conn)
                sealed += self._vault.seal(row["id"], result.secrets)
                report.redacted += 1
                if twin is not None:
                    report.merged += 1
                elif not row["deleted"]:
                    if not row["is_sensitive"]:
                        jobs += indexing_jobs([row["id"]])
                    jobs.append(embedding_job(row["id"]))  # a sensitive one ends it if no model may
            await insert_sealed(conn, sealed)
            await self._jobs.add(conn, jobs)
        report.sealed += len(sealed)
