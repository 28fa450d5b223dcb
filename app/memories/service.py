"""Memory store/read/list/update/delete logic. Embedding happens outside any transaction.

The after-commit work a write needs (concept indexing; embedding, when the provider failed) is
enqueued as durable jobs in the write's own transaction: an acknowledged write always gets it done,
whatever crashes after the commit. Writes that touch the graph take the namespace's graph lock
before the memory row, the one lock order of every graph writer, so they never deadlock with the
worker indexing the same memory.

Every write redacts credentials first (app.memories.redaction): only placeholders are hashed,
embedded and stored, so nothing downstream ever holds a credential; with a key configured, the
originals are sealed in the write's own transaction and opened only by `read_secrets`, for the owner.

Every `memory_id` taken or answered here is the memory's public id (random; see app/memories/sql.py):
the first query of each path looks the memory up by it, and everything after uses the internal id.
"""

from __future__ import annotations

import asyncio
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
import msgspec
from msgspec import UNSET
from pgvector import HalfVector

from app.core import timing
from app.core.time import as_utc
from app.db import Database
from app.db.queries import with_shared_fragments
from app.embeddings import Embedded, Embedder, EmbeddingError, guarded
from app.embeddings.backfill import embedding_job
from app.errors import ApiError, Conflict, InvalidInput, NotFound
from app.graph import indexing_jobs, lock_graph, unlink_memories
from app.jobs import JobQueue, JobSettings, NewJob
from app.memories import sql
from app.memories.expiry import ensure_sweep
from app.memories.redaction import (
    TEXT_FIELDS,
    RedactedFields,
    check_stored_bounds,
    placeholder_numbers,
    placeholders_by_number,
    redact_fields,
)
from app.memories.schemas import (
    Memory,
    MemoryIn,
    MemoryKind,
    MemoryPage,
    MemoryPatch,
    MemorySecrets,
    SecretOriginal,
    StoreResult,
)
from app.memories.settings import MemorySettings
from app.memories.validation import clean_memory, clean_patch
from app.namespaces import ensure_namespaces, resolve_namespaces, writable_namespace
from app.secrets import (
    SealedSecret,
    SecretsError,
    SecretSettings,
    Vault,
    insert_sealed,
    keep_sealed,
    placeholder,
    read_sealed,
)

log = logging.getLogger(__name__)

MAX_CLIENT_CHARS = 200
"""`secret_reads.client` holds at most this much of the reader's address."""

INSERT_ATTEMPTS = 5
"""Tries to insert one memory: a public id collision (a chance of rows / 2^53) is retried, and five
in a row would mean something else is wrong."""


class SecretsUnreadable(ApiError):
    """Sealed originals this server cannot open: their key is no longer configured, or a row does
    not authenticate (altered, or moved from another memory). The stored rows are untouched."""

    status_code = 409


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
    kind: MemoryKind | None = None
    pinned: bool | None = None


@dataclass(frozen=True, slots=True)
class EpisodeIn:
    """One captured episode to store (`MemoryService.store_episodes`): `memory` goes through the
    same checks and redaction as a stored memory; the rest is what only a capture sets."""

    memory: MemoryIn
    capture_key: str
    """Unique per namespace, deleted rows included: the same key again is a duplicate."""
    expires_at: datetime
    created_at: datetime | None = None
    """When the exchange happened (its transcript timestamp); None: now."""


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


async def _insert(
    conn: asyncpg.Connection, namespace_id: int, hashed: bytes, *values: Any
) -> tuple[int, int, bool]:
    """Insert one memory (`values`: INSERT_MEMORY's after the namespace and content hash):
    (internal id, public id, duplicate). A duplicate answers its live twin's ids. Neither inserted
    nor a twin means the random public id drawn was taken (or the twin went away meanwhile):
    inserting again draws another id."""
    for _ in range(INSERT_ATTEMPTS):
        row = await conn.fetchrow(sql.INSERT_MEMORY, namespace_id, hashed, *values)
        if row is not None:
            return row["id"], row["public_id"], False
        twin = await conn.fetchrow(sql.LIVE_ID_BY_HASH, namespace_id, hashed)
        if twin is not None:
            return twin["id"], twin["public_id"], True
    raise RuntimeError(f"no memory inserted nor found after {INSERT_ATTEMPTS} attempts")


def _json(value: Any) -> str:
    return msgspec.json.encode(value).decode()


def _row_columns(
    ns_of: Sequence[int], hashes: Sequence[bytes], cleaned: Sequence[MemoryIn]
) -> tuple[list[Any], ...]:
    """The columns every batched INSERT starts with (INSERT_MEMORIES, INSERT_EPISODES): one list per
    column, one element per memory; tags as JSON text (an array of arrays would be read as 2-D)."""
    return (
        list(ns_of),
        list(hashes),
        [m.content for m in cleaned],
        [m.category for m in cleaned],
        [_json(m.tags) for m in cleaned],
        [m.importance for m in cleaned],
        [m.expanded_keywords for m in cleaned],
        [m.is_sensitive for m in cleaned],
        [m.source for m in cleaned],
        [m.metadata for m in cleaned],
    )


def _memory_columns(
    ns_of: Sequence[int],
    hashes: Sequence[bytes],
    cleaned: Sequence[MemoryIn],
    redacted: Sequence[RedactedFields],
    vector_of: dict[int, Embedded],
) -> tuple[list[Any], ...]:
    """INSERT_MEMORIES' parameters."""
    vectors = [vector_of.get(i) for i in range(len(cleaned))]
    return (
        *_row_columns(ns_of, hashes, cleaned),
        [HalfVector(v.vector) if v is not None else None for v in vectors],
        [v.model_id if v is not None else None for v in vectors],
        [bool(placeholder_numbers(r.fields)) for r in redacted],
        [m.pinned for m in cleaned],
    )


def _episode_columns(
    ns_of: Sequence[int],
    hashes: Sequence[bytes],
    cleaned: Sequence[MemoryIn],
    redacted: Sequence[RedactedFields],
    episodes: Sequence[EpisodeIn],
) -> tuple[Sequence[Any], ...]:
    """INSERT_EPISODES' parameters."""
    return (
        *_row_columns(ns_of, hashes, cleaned),
        [bool(placeholder_numbers(r.fields)) for r in redacted],
        [as_utc(e.expires_at) for e in episodes],
        [e.capture_key for e in episodes],
        [as_utc(e.created_at) for e in episodes],
    )


async def _insert_episode(
    conn: asyncpg.Connection,
    namespace_id: int,
    hashed: bytes,
    memory: MemoryIn,
    episode: EpisodeIn,
    redacted: RedactedFields,
) -> tuple[int, int, bool]:
    """One episode alone, when the batch's INSERT left it out and neither its key nor its content
    was found (the random public id drawn was taken, or the twin went meanwhile): (internal id,
    public id, duplicate), as `_insert` answers for a memory."""
    for _ in range(INSERT_ATTEMPTS):
        columns = _episode_columns([namespace_id], [hashed], [memory], [redacted], [episode])
        row = await conn.fetchrow(sql.INSERT_EPISODES, *columns)
        if row is not None:
            return row["id"], row["public_id"], False
        found = await conn.fetchrow(sql.CAPTURED, [namespace_id], [episode.capture_key])
        if found is None:
            found = await conn.fetchrow(sql.LIVE_ID_BY_HASH, namespace_id, hashed)
        if found is not None:
            return found["id"], found["public_id"], True
    raise RuntimeError(f"no episode inserted nor found after {INSERT_ATTEMPTS} attempts")


def _given_fields(patch: MemoryPatch) -> dict[str, Any]:
    """The free-text fields a PATCH sets (to a value or to null)."""
    return {name: getattr(patch, name) for name in TEXT_FIELDS if given(getattr(patch, name))}


class MemoryService:
    def __init__(
        self,
        db: Database,
        embedder: Embedder,
        limits: MemorySettings,
        jobs: JobQueue | None = None,
        index_graph: bool = True,
        secrets: SecretSettings | None = None,
    ) -> None:
        """`jobs`: where follow-up work goes (the app passes its worker's queue, which wakes the
        worker; without one, jobs are still written for whoever works the queue). `index_graph`:
        whether stored and changed memories are queued for concept indexing. `secrets`: whether
        credentials are redacted and the keys their originals are sealed under (default: redact,
        keep nothing)."""
        secrets = secrets if secrets is not None else SecretSettings()
        self._redact = secrets.redact
        self._vault = Vault.from_settings(secrets)
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
        # Server-Timing phases (when on): prepare (checks, redaction), lookup (namespaces, duplicate
        # hashes), embed, sql (the INSERT transaction); they follow one another on the request's path.
        with timing.timed("prepare"):
            cleaned, redacted = self.prepare(items)
            hashes = [content_hash(m.content) for m in cleaned]

        with timing.timed("lookup"):
            async with self._db.write.acquire() as conn, conn.transaction():
                ns_ids = await ensure_namespaces(conn, user_id, (m.namespace for m in cleaned))
            ns_of = [ns_ids[m.namespace] for m in cleaned]

            existing = {
                (r["namespace_id"], bytes(r["content_hash"])): r["id"]
                for r in await self._db.write.fetch(sql.EXISTING_HASHES, ns_of, hashes)
            }
        to_embed = [i for i in range(len(cleaned)) if (ns_of[i], hashes[i]) not in existing]
        with timing.timed("embed"):
            embedded, embed_error = await self._embed(
                [cleaned[i].content for i in to_embed], [cleaned[i].is_sensitive for i in to_embed]
            )
        vector_of = {i: e for i, e in zip(to_embed, embedded, strict=True) if e is not None}

        results: list[StoreResult] = []
        jobs: list[NewJob] = []
        sealed: list[SealedSecret] = []
        with timing.timed("sql"):  # the INSERT transaction, commit included
            async with self._db.write.acquire() as conn, conn.transaction():
                columns = _memory_columns(ns_of, hashes, cleaned, redacted, vector_of)
                inserted = {
                    (row["namespace_id"], bytes(row["content_hash"])): (row["id"], row["public_id"])
                    for row in await conn.fetch(sql.INSERT_MEMORIES, *columns)
                }
                for i, memory in enumerate(cleaned):
                    vector = vector_of.get(i)
                    ids = inserted.pop((ns_of[i], hashes[i]), None)  # the first of a content given twice
                    if ids is not None:
                        (new_id, public_id), duplicate = ids, False
                    else:  # left out by the batch: its live twin, or inserted alone (public id drawn twice)
                        new_id, public_id, duplicate = await _insert(
                            conn,
                            ns_of[i],
                            hashes[i],
                            memory.content,
                            memory.category,
                            memory.tags,
                            memory.importance,
                            memory.expanded_keywords,
                            memory.is_sensitive,
                            memory.source,
                            memory.metadata,
                            columns[10][i],
                            columns[11][i],
                            columns[12][i],
                            memory.pinned,
                        )
                    # a duplicate's stored twin keeps its own originals; this one's are not kept
                    if not duplicate:
                        jobs += self._follow_up(new_id, memory.is_sensitive, vector is None, embed_error)
                        sealed += self._vault.seal(new_id, redacted[i].secrets)
                    results.append(
                        StoreResult(
                            id=public_id,
                            namespace=memory.namespace,
                            duplicate=duplicate,
                            embedded=vector is not None,
                        )
                    )
                await insert_sealed(conn, sealed)  # the originals commit (or roll back) with their memories
                await self._jobs.add(conn, jobs)
        if jobs:
            self._jobs.wake()
        return results

    def prepare(self, items: Sequence[MemoryIn]) -> tuple[list[MemoryIn], list[RedactedFields]]:
        """Every write's checks, then credential redaction: only redacted text goes further (hash,
        embedding, storage, and so every reader). Returns the cleaned items and their redactions."""
        many = len(items) > 1
        redacted: list[RedactedFields] = []
        cleaned: list[MemoryIn] = []
        for i, item in enumerate(items):
            where = f"[{i}]." if many else ""
            memory = clean_memory(item, self._limits, where)
            fields = self._redacted({name: getattr(memory, name) for name in TEXT_FIELDS}, where)
            redacted.append(fields)
            cleaned.append(msgspec.structs.replace(memory, **fields.fields))
        return cleaned, redacted

    async def store_episodes(self, user_id: int, episodes: Sequence[EpisodeIn]) -> list[StoreResult]:
        """Store captured exchanges as `episode` memories: the checks and redaction of `store`, one
        transaction, one INSERT for the batch, and no embedding in the request: each new episode
        gets the durable embedding job (and indexing, like any memory), so a capture of hundreds of
        exchanges answers in milliseconds. An episode whose capture key the namespace holds already
        (deleted or not), or whose content it holds live, is a `duplicate` answering that memory's
        id. Results are in the order given. The capture route bounds the batch."""
        if not episodes:
            return []
        # Credential detection over up to a request body of text is CPU work (~1 ms per exchange):
        # off the event loop, so prompt hooks and recalls arriving meanwhile are not held behind it.
        cleaned, redacted = await asyncio.to_thread(self.prepare, [e.memory for e in episodes])
        hashes = [content_hash(m.content) for m in cleaned]
        keys = [e.capture_key for e in episodes]
        async with self._db.write.acquire() as conn, conn.transaction():
            ns_ids = await ensure_namespaces(conn, user_id, (m.namespace for m in cleaned))
        ns_of = [ns_ids[m.namespace] for m in cleaned]

        results: list[StoreResult] = []
        jobs: list[NewJob] = []
        sealed: list[SealedSecret] = []
        async with self._db.write.acquire() as conn, conn.transaction():
            rows = await conn.fetch(
                sql.INSERT_EPISODES, *_episode_columns(ns_of, hashes, cleaned, redacted, episodes)
            )
            inserted = {(r["namespace_id"], r["capture_key"]): (r["id"], r["public_id"]) for r in rows}
            left = [i for i in range(len(episodes)) if (ns_of[i], keys[i]) not in inserted]
            captured: dict[tuple[int, str], tuple[int, int]] = {}
            twins: dict[tuple[int, bytes], tuple[int, int]] = {}
            if left:
                captured = {
                    (r["namespace_id"], r["capture_key"]): (r["id"], r["public_id"])
                    for r in await conn.fetch(sql.CAPTURED, [ns_of[i] for i in left], [keys[i] for i in left])
                }
                twins = {
                    (r["namespace_id"], bytes(r["content_hash"])): (r["id"], r["public_id"])
                    for r in await conn.fetch(
                        sql.LIVE_BY_HASHES, [ns_of[i] for i in left], [hashes[i] for i in left]
                    )
                }
            claimed: set[tuple[int, str]] = set()
            for i, (memory, episode) in enumerate(zip(cleaned, episodes, strict=True)):
                key = (ns_of[i], keys[i])
                if key in inserted and key not in claimed:  # the same key twice in a batch: once
                    claimed.add(key)
                    (new_id, public_id), duplicate = inserted[key], False
                elif key in inserted or key in captured:
                    (new_id, public_id), duplicate = inserted.get(key) or captured[key], True
                elif (ns_of[i], hashes[i]) in twins:
                    (new_id, public_id), duplicate = twins[(ns_of[i], hashes[i])], True
                else:  # the public id drawn was taken (or the twin went meanwhile): alone, again
                    new_id, public_id, duplicate = await _insert_episode(
                        conn, ns_of[i], hashes[i], memory, episode, redacted[i]
                    )
                if not duplicate:
                    jobs += self._follow_up(new_id, memory.is_sensitive, True, None)
                    sealed += self._vault.seal(new_id, redacted[i].secrets)
                results.append(
                    StoreResult(id=public_id, namespace=memory.namespace, duplicate=duplicate, embedded=False)
                )
            await insert_sealed(conn, sealed)
            await self._jobs.add(conn, jobs)
            if any(not r.duplicate for r in results):  # they expire: the sweep must be running
                await ensure_sweep(conn, self._limits.expiry_interval_s)
        if jobs:
            self._jobs.wake()
        return results

    def _redacted(self, fields: dict[str, Any], where: str = "", used: Sequence[int] = ()) -> RedactedFields:
        """`fields` with credentials replaced (unless redaction is off), within the stored bounds."""
        result = redact_fields(fields, used=used) if self._redact else RedactedFields(fields, ())
        check_stored_bounds(result.fields, where)
        return result

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
        row = await self._db.write.fetchrow(
            with_shared_fragments(sql.GET_MEMORY), memory_id, user_id, include_deleted
        )
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
            with_shared_fragments(sql.LIST_MEMORIES),
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
            filters.kind,
            filters.pinned,
        )
        items = [_memory(r) for r in rows[:limit]]
        next_cursor = encode_cursor(items[-1].created_at, items[-1].id) if len(rows) > limit else None
        return MemoryPage(items=items, next_cursor=next_cursor)

    async def update(
        self, user_id: int, memory_id: int, patch: MemoryPatch, *, promote: bool = False
    ) -> Memory:
        """Change a memory. The fields it sets are redacted like a store's, new credentials numbered
        after the placeholders the memory holds; under the row lock, originals whose placeholder no
        longer appears in any field are deleted and the new ones sealed, in the change's transaction.
        `promote`: also make it a curated memory that never expires (see `promote`)."""
        patch = clean_patch(patch, self._limits)
        current = await self.get(user_id, memory_id)
        before = {name: getattr(current, name) for name in TEXT_FIELDS}
        changes = _given_fields(patch)
        planned = self._redacted(changes, used=sorted(placeholder_numbers(before)))
        patch = msgspec.structs.replace(patch, **planned.fields)
        new_content = patch.content if isinstance(patch.content, str) else None
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
            # 404 when not the caller's to see, 403 when shared with them read-only
            row = await conn.fetchrow(sql.LIVE_NAMESPACE, memory_id, user_id)
            namespace_id = writable_namespace(row, f"memory {memory_id}")
            internal_id: int = row["id"]  # `memory_id` is the public id; the writes use this one
            if regraph:
                await lock_graph(conn, {namespace_id})  # before the memory row: the lock order
            locked = await conn.fetchrow(sql.LOCK_MEMORY, internal_id, user_id)
            if locked is None:
                raise NotFound(f"memory {memory_id} not found")
            stored = dict(await conn.fetchrow(sql.LOCKED_TEXT, internal_id))
            final = planned
            if stored != before:  # changed since it was read: number after what it holds now
                final = self._redacted(changes, used=sorted(placeholder_numbers(stored)))
                patch = msgspec.structs.replace(patch, **final.fields)
                if new_content is not None and patch.content != new_content:
                    new_content = patch.content if isinstance(patch.content, str) else None
                    vector, embed_error = None, None  # renumbered text: the embedding job embeds it
            written = {name: value for name, value in final.fields.items() if name != "content"}
            if new_content is not None:
                written["content"] = new_content
            kept = placeholder_numbers({**stored, **written})
            new_hash = content_hash(new_content) if new_content is not None else None
            if new_hash is not None:
                clash = await conn.fetchrow(sql.LIVE_ID_BY_HASH, locked["namespace_id"], new_hash)
                if clash is not None and clash["id"] != internal_id:
                    other = clash["public_id"]
                    raise Conflict(
                        f"memory {other} in this namespace already has this content", existing_id=other
                    )
            if regraph:
                # its evidence leaves the graph with this change; the indexing job links it anew
                await unlink_memories(conn, [internal_id])
            updated = await conn.fetchrow(
                sql.UPDATE_MEMORY,
                internal_id,
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
                bool(kept),
                patch.pinned if given(patch.pinned) else None,
                promote,
            )
            if changes:
                # an original lives exactly as long as its placeholder does, in some field
                await keep_sealed(conn, internal_id, kept)
                new = [secret for secret in final.secrets if secret.number in kept]
                await insert_sealed(conn, self._vault.seal(internal_id, new))
            if regraph:
                # a vector is due when the text changed or the memory stopped being sensitive
                needs_vector = updated["unembedded"] and (
                    new_content is not None or given(patch.is_sensitive)
                )
                jobs = self._follow_up(internal_id, updated["is_sensitive"], needs_vector, embed_error)
                await self._jobs.add(conn, jobs)
        if jobs:
            self._jobs.wake()
        return await self.get(user_id, memory_id)

    async def promote(
        self,
        user_id: int,
        memory_id: int,
        *,
        importance: float | None = None,
        pinned: bool | None = None,
        category: str | None = None,
        tags: Sequence[str] | None = None,
    ) -> Memory:
        """Make a memory curated: an episode becomes kind `memory`, never expires (its capture key
        stays, so the exchange is not captured again), and its importance becomes `importance` or
        at least 0.5. A curated memory stays as it is but for the fields given. It is `update` with
        the promotion on top: the same checks, redaction, locks and follow-up jobs."""
        if importance is not None and not 0.0 <= importance <= 1.0:
            raise InvalidInput(f"importance must be between 0 and 1, got {importance}")
        patch = MemoryPatch(
            importance=importance if importance is not None else UNSET,
            pinned=pinned if pinned is not None else UNSET,
            category=category if category is not None else UNSET,
            tags=list(tags) if tags is not None else UNSET,
        )
        return await self.update(user_id, memory_id, patch, promote=True)

    async def read_secrets(
        self, user_id: int, memory_id: int, key_id: int | None, client: str | None
    ) -> MemorySecrets:
        """The originals of a live memory's placeholders, for its owner only (a namespace shared
        with the caller is not theirs: 404). Each successful read leaves one `secret_reads` row,
        written in the same transaction, so no original leaves without its record."""
        async with self._db.write.acquire() as conn, conn.transaction():
            row = await conn.fetchrow(sql.OWNED_LIVE_TEXT, memory_id, user_id)
            if row is None:
                raise NotFound(f"memory {memory_id} not found")
            internal_id = row["id"]  # what the sealed originals and the audit are keyed by
            try:
                opened = self._vault.open(await read_sealed(conn, internal_id))
            except SecretsError as exc:
                raise SecretsUnreadable(str(exc)) from None
            await conn.execute(
                sql.AUDIT_READ,
                internal_id,
                user_id,
                key_id,
                len(opened),
                client[:MAX_CLIENT_CHARS] if client else None,
            )
        written = placeholders_by_number({name: row[name] for name in TEXT_FIELDS})
        kept = {secret.number for secret in opened}
        not_kept = [written[number] for number in sorted(written.keys() - kept)]
        detail = None
        if not_kept:
            detail = "the originals of these placeholders are kept nowhere: " + (
                "this server has no encryption key configured (MEMORIA_SECRETS__KEYS), so redaction "
                "keeps nothing"
                if not self._vault.keeps_originals
                else "they were redacted while no encryption key was configured, or the text held "
                "them as placeholders already"
            )
        return MemorySecrets(
            memory_id=memory_id,
            secrets=[
                SecretOriginal(
                    placeholder=placeholder(secret.kind, secret.number),
                    kind=secret.kind,
                    number=secret.number,
                    original=secret.original,
                )
                for secret in opened
            ],
            originals_kept=not not_kept,
            not_kept=not_kept,
            detail=detail,
        )

    async def delete(self, user_id: int, memory_id: int, purge: bool = False) -> None:
        """Soft delete or purge; the memory's concept-graph evidence goes in the same transaction.

        The graph lock comes before the memory row lock, as in every graph writer: taking the row
        first deadlocked with the worker indexing a just-stored memory (issue #15). A purge
        cascades the memory's pending jobs away; a soft-deleted memory's jobs end as no-ops."""
        async with self._db.write.acquire() as conn, conn.transaction():
            row = await conn.fetchrow(sql.OWNED_NAMESPACE, memory_id, user_id)
            namespace_id = writable_namespace(row, f"memory {memory_id}")  # 404, or 403 if read-only
            internal_id: int = row["id"]  # `memory_id` is the public id; the writes use this one
            await lock_graph(conn, {namespace_id})
            if await conn.fetchval(sql.LOCK_OWNED_MEMORY, internal_id) is None:
                raise NotFound(f"memory {memory_id} not found")  # purged while we waited
            await unlink_memories(conn, [internal_id])
            await conn.execute(sql.PURGE if purge else sql.SOFT_DELETE, internal_id, user_id)

    async def restore(self, user_id: int, memory_id: int) -> Memory:
        """Undo a soft delete (the UI's "Undo" after "Forget"): the memory is live again and its
        concepts are indexed anew (a soft delete took its graph evidence away). 409 when a live memory
        of the namespace has the same content by now; a memory that is not deleted is left as it is."""
        jobs: list[NewJob] = []
        async with self._db.write.acquire() as conn, conn.transaction():
            row = await conn.fetchrow(sql.OWNED_NAMESPACE, memory_id, user_id)
            writable_namespace(row, f"memory {memory_id}")  # 404, or 403 if read-only
            internal_id: int = row["id"]
            if await conn.fetchval(sql.LOCK_OWNED_MEMORY, internal_id) is None:
                raise NotFound(f"memory {memory_id} not found")  # purged meanwhile
            try:
                async with conn.transaction():  # a savepoint: the clash is looked up after it failed
                    restored = await conn.fetchrow(sql.RESTORE, internal_id, user_id)
            except asyncpg.UniqueViolationError:
                clash = await conn.fetchrow(sql.LIVE_CLASH, internal_id)
                other = clash["public_id"] if clash is not None else None
                raise Conflict(
                    f"memory {other} in this namespace has the same content: restoring this one "
                    "would make two",
                    existing_id=other,
                ) from None
            if restored is not None:
                jobs = self._follow_up(internal_id, restored["is_sensitive"], restored["unembedded"], None)
                await self._jobs.add(conn, jobs)
        if jobs:
            self._jobs.wake()
        return await self.get(user_id, memory_id)

    async def internal_ids(self, public_ids: Sequence[int]) -> Sequence[int]:
        """The internal ids of memories given by public id (unknown ones left out), for in-process
        tools that hand what `store` answered to internal machinery, such as the benchmarks' graph
        indexing. Never for a caller of the API: it takes and answers public ids only."""
        return [r["id"] for r in await self._db.write.fetch(sql.INTERNAL_IDS, list(public_ids))]
