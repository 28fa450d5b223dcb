"""Memory store/read/list/update/delete logic. Embedding happens outside any transaction.

The after-commit work a write needs (concept indexing; embedding, when the provider failed) is
enqueued as durable jobs in the write's own transaction: an acknowledged write always gets it done,
whatever crashes after the commit. Writes that touch the graph take the namespace's graph lock
before the memory row, the one lock order of every graph writer, so they never deadlock with the
worker indexing the same memory.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg
from msgspec import UNSET
from pgvector import HalfVector

from app.core.time import as_utc
from app.db import Database
from app.embeddings import Embedded, Embedder, EmbeddingError, guarded
from app.embeddings.backfill import embedding_job
from app.errors import Conflict, InvalidInput, NotFound
from app.graph import indexing_jobs, lock_graph, unlink_memories
from app.jobs import JobQueue, JobSettings, NewJob
from app.memories import sql
from app.memories.schemas import Memory, MemoryIn, MemoryPage, MemoryPatch, StoreResult
from app.memories.settings import MemorySettings
from app.memories.validation import clean_memory, clean_patch
from app.namespaces import ensure_namespaces, resolve_namespaces

log = logging.getLogger(__name__)


def content_hash(content: str) -> bytes:
    return hashlib.sha256(content.encode("utf-8")).digest()


@dataclass(frozen=True, slots=True)
class ListFilters:
    namespaces: Sequence[str] | None = None
    category: str | None = None
    tags: Sequence[str] | None = None
    tags_match_all: bool = False
    created_since: datetime | None = None
    created_until: datetime | None = None
    include_deleted: bool = False
    include_sensitive: bool = False


def encode_cursor(created_at: datetime, memory_id: int) -> str:
    raw = json.dumps([created_at.isoformat(), memory_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, int]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        stamp, memory_id = json.loads(raw)
        return datetime.fromisoformat(stamp), int(memory_id)
    except (binascii.Error, ValueError, TypeError, UnicodeDecodeError) as exc:
        raise InvalidInput("cursor is not a value returned by this API") from exc


def given(value: Any) -> bool:
    """True when a PATCH body set the field (even to null)."""
    return value is not UNSET


def _memory(row: asyncpg.Record) -> Memory:
    return Memory(**dict(row))


class MemoryService:
    def __init__(
        self,
        db: Database,
        embedder: Embedder,
        limits: MemorySettings,
        jobs: JobQueue | None = None,
        index_graph: bool = True,
    ) -> None:
        """`jobs`: where follow-up work goes (the app passes its worker's queue, which wakes the
        worker; without one, jobs are still written for whoever works the queue). `index_graph`:
        whether stored and changed memories are queued for concept indexing."""
        self._db = db
        self._router = guarded(embedder)
        self._limits = limits
        self._jobs = jobs if jobs is not None else JobQueue(JobSettings())
        self._index_graph = index_graph

    async def _embed(
        self, texts: Sequence[str], sensitive: Sequence[bool]
    ) -> tuple[list[Embedded | None], str | None]:
        """Embed for storage; sensitive text reaches only in-process models. A provider failure
        stores the memories without vectors (an embedding job retries) instead of failing the
        request: then the second value is the error."""
        if not texts:
            return [], None
        try:
            return await self._router.embed_for_storage(texts, sensitive), None
        except EmbeddingError as exc:
            log.warning("embedding failed; storing without embeddings (a job retries)", exc_info=True)
            return [None] * len(texts), f"{type(exc).__name__}: {exc}"

    def _may_embed(self, is_sensitive: bool) -> bool:
        """Whether some model may embed this memory (sensitive text needs an in-process one)."""
        return not is_sensitive or self._router.sensitive_model_id is not None

    async def store(self, user_id: int, items: Sequence[MemoryIn]) -> list[StoreResult]:
        if len(items) > self._limits.max_batch:
            raise InvalidInput(f"a batch holds at most {self._limits.max_batch} memories, got {len(items)}")
        if not items:
            raise InvalidInput("the batch is empty")
        many = len(items) > 1
        cleaned = [clean_memory(m, self._limits, f"[{i}]." if many else "") for i, m in enumerate(items)]
        hashes = [content_hash(m.content) for m in cleaned]

        async with self._db.write.acquire() as conn, conn.transaction():
            ns_ids = await ensure_namespaces(conn, user_id, (m.namespace for m in cleaned))
        ns_of = [ns_ids[m.namespace] for m in cleaned]

        existing = {
            (r["namespace_id"], bytes(r["content_hash"])): r["id"]
            for r in await self._db.write.fetch(sql.EXISTING_HASHES, ns_of, hashes)
        }
        to_embed = [i for i in range(len(cleaned)) if (ns_of[i], hashes[i]) not in existing]
        embedded, embed_error = await self._embed(
            [cleaned[i].content for i in to_embed], [cleaned[i].is_sensitive for i in to_embed]
        )
        vector_of = {i: e for i, e in zip(to_embed, embedded, strict=True) if e is not None}

        results: list[StoreResult] = []
        jobs: list[NewJob] = []
        async with self._db.write.acquire() as conn, conn.transaction():
            for i, memory in enumerate(cleaned):
                vector = vector_of.get(i)
                new_id = await conn.fetchval(
                    sql.INSERT_MEMORY,
                    ns_of[i],
                    memory.content,
                    memory.category,
                    memory.tags,
                    memory.importance,
                    memory.expanded_keywords,
                    memory.is_sensitive,
                    memory.source,
                    memory.metadata,
                    hashes[i],
                    HalfVector(vector.vector) if vector is not None else None,
                    vector.model_id if vector is not None else None,
                )
                duplicate = new_id is None
                if duplicate:
                    new_id = await conn.fetchval(sql.LIVE_ID_BY_HASH, ns_of[i], hashes[i])
                else:
                    jobs += self._follow_up(new_id, memory.is_sensitive, vector is None, embed_error)
                results.append(
                    StoreResult(
                        id=new_id,
                        namespace=memory.namespace,
                        duplicate=duplicate,
                        embedded=vector is not None,
                    )
                )
            await self._jobs.add(conn, jobs)
        if jobs:
            self._jobs.wake()
        return results

    def _follow_up(
        self, memory_id: int, is_sensitive: bool, unembedded: bool, embed_error: str | None
    ) -> list[NewJob]:
        """The jobs a stored or changed memory needs: concept indexing (never for sensitive ones), and
        embedding when it has no vector but some model may embed it (after a provider failure the
        job waits out a backoff first)."""
        jobs: list[NewJob] = []
        if self._index_graph and not is_sensitive:
            jobs += indexing_jobs([memory_id])
        if unembedded and self._may_embed(is_sensitive):
            jobs.append(embedding_job(memory_id, embed_error))
        return jobs

    async def get(self, user_id: int, memory_id: int, include_deleted: bool = False) -> Memory:
        row = await self._db.write.fetchrow(sql.GET_MEMORY, memory_id, user_id, include_deleted)
        if row is None:
            raise NotFound(f"memory {memory_id} not found")
        return _memory(row)

    async def list(
        self, user_id: int, filters: ListFilters, limit: int, cursor: str | None = None
    ) -> MemoryPage:
        ns_ids = (
            await resolve_namespaces(self._db.write, user_id, filters.namespaces)
            if filters.namespaces
            else None
        )
        after_at, after_id = decode_cursor(cursor) if cursor else (None, None)
        rows = await self._db.write.fetch(
            sql.LIST_MEMORIES,
            user_id,
            ns_ids,
            filters.category,
            list(filters.tags) if filters.tags else None,
            filters.tags_match_all,
            as_utc(filters.created_since),
            as_utc(filters.created_until),
            filters.include_deleted,
            filters.include_sensitive,
            after_at,
            after_id,
            limit + 1,
        )
        items = [_memory(r) for r in rows[:limit]]
        next_cursor = encode_cursor(items[-1].created_at, items[-1].id) if len(rows) > limit else None
        return MemoryPage(items=items, next_cursor=next_cursor)

    async def update(self, user_id: int, memory_id: int, patch: MemoryPatch) -> Memory:
        patch = clean_patch(patch, self._limits)
        new_content = patch.content if isinstance(patch.content, str) else None
        current = await self.get(user_id, memory_id)
        if new_content == current.content:
            new_content = None
        is_sensitive = patch.is_sensitive if isinstance(patch.is_sensitive, bool) else current.is_sensitive
        vector: Embedded | None = None
        embed_error: str | None = None
        if new_content is not None:
            (vector,), embed_error = await self._embed([new_content], [is_sensitive])
        # Re-extract only when something the extractor reads (or its sensitivity filter) changed.
        regraph = any(
            given(value) for value in (patch.content, patch.tags, patch.expanded_keywords, patch.is_sensitive)
        )

        jobs: list[NewJob] = []
        async with self._db.write.acquire() as conn, conn.transaction():
            namespace_id = await conn.fetchval(sql.LIVE_NAMESPACE, memory_id, user_id)
            if namespace_id is None:
                raise NotFound(f"memory {memory_id} not found")
            if regraph:
                await lock_graph(conn, {namespace_id})  # before the memory row: the lock order
            locked = await conn.fetchrow(sql.LOCK_MEMORY, memory_id, user_id)
            if locked is None:
                raise NotFound(f"memory {memory_id} not found")
            new_hash = content_hash(new_content) if new_content is not None else None
            if new_hash is not None:
                clash = await conn.fetchval(sql.LIVE_ID_BY_HASH, locked["namespace_id"], new_hash)
                if clash is not None and clash != memory_id:
                    raise Conflict(
                        f"memory {clash} in this namespace already has this content", existing_id=clash
                    )
            if regraph:
                # its evidence leaves the graph with this change; the indexing job links it anew
                await unlink_memories(conn, [memory_id])
            updated = await conn.fetchrow(
                sql.UPDATE_MEMORY,
                memory_id,
                new_content,
                new_hash,
                new_content is not None,
                HalfVector(vector.vector) if vector is not None else None,
                vector.model_id if vector is not None else None,
                given(patch.category),
                patch.category if given(patch.category) else None,
                patch.tags if given(patch.tags) else None,
                patch.importance if given(patch.importance) else None,
                given(patch.expanded_keywords),
                patch.expanded_keywords if given(patch.expanded_keywords) else None,
                patch.is_sensitive if given(patch.is_sensitive) else None,
                given(patch.source),
                patch.source if given(patch.source) else None,
                patch.metadata if given(patch.metadata) else None,
            )
            if regraph:
                # a vector is due when the text changed or the memory stopped being sensitive
                needs_vector = updated["unembedded"] and (
                    new_content is not None or given(patch.is_sensitive)
                )
                jobs = self._follow_up(memory_id, updated["is_sensitive"], needs_vector, embed_error)
                await self._jobs.add(conn, jobs)
        if jobs:
            self._jobs.wake()
        return await self.get(user_id, memory_id)

    async def delete(self, user_id: int, memory_id: int, purge: bool = False) -> None:
        """Soft delete or purge; the memory's concept-graph evidence goes in the same transaction.

        The graph lock comes before the memory row lock, as in every graph writer: taking the row
        first deadlocked with the worker indexing a just-stored memory (issue #15). A purge
        cascades the memory's pending jobs away; a soft-deleted memory's jobs end as no-ops."""
        async with self._db.write.acquire() as conn, conn.transaction():
            namespace_id = await conn.fetchval(sql.OWNED_NAMESPACE, memory_id, user_id)
            if namespace_id is None:
                raise NotFound(f"memory {memory_id} not found")
            await lock_graph(conn, {namespace_id})
            if await conn.fetchval(sql.LOCK_OWNED_MEMORY, memory_id) is None:
                raise NotFound(f"memory {memory_id} not found")  # purged while we waited
            await unlink_memories(conn, [memory_id])
            await conn.execute(sql.PURGE if purge else sql.SOFT_DELETE, memory_id, user_id)
