"""Storing memories: a batch of curated memories (`store`) or of captured episodes
(`store_episodes`), each batch one INSERT of one array per column, duplicates answered with the ids
of the memories they duplicate. Embedding happens before the INSERT transaction, never inside it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg
import msgspec
from pgvector import HalfVector

from app.core import timing
from app.core.time import as_utc
from app.db.queries import NamedQuery
from app.embeddings import Embedded
from app.errors import InvalidInput
from app.jobs import NewJob
from app.links import link
from app.links.supersede import AutoSupersede, auto_link, auto_supersede, find_supersede_many
from app.memories import queries as q
from app.memories.expiry import ensure_sweep
from app.memories.redaction import RedactedFields, placeholder_numbers
from app.memories.schemas import MemoryIn, StoreResult, SupersedeSuggestion
from app.memories.writing import WritePath, content_hash
from app.secrets import SealedSecret, insert_sealed

INSERT_ATTEMPTS = 5
"""Tries to insert one memory: a public id collision (a chance of rows / 2^53) is retried, and five
in a row would mean something else is wrong."""


@dataclass(frozen=True, slots=True)
class EpisodeIn:
    """One captured episode to store (`MemoryStore.store_episodes`): `memory` goes through the
    same checks and redaction as a stored memory; the rest is what only a capture sets."""

    memory: MemoryIn
    capture_key: str
    """Unique per namespace, deleted rows included: the same key again is a duplicate."""
    expires_at: datetime
    created_at: datetime | None = None
    """When the exchange happened (its transcript timestamp); None: now."""


def _json(value: Any) -> str:
    return msgspec.json.encode(value).decode()


def _memories_batch(
    ns_of: Sequence[int],
    hashes: Sequence[bytes],
    cleaned: Sequence[MemoryIn],
    redacted: Sequence[RedactedFields],
    vectors: Sequence[Embedded | None],
) -> q.InsertMemories:
    """The INSERT of these memories, one list per column, one element per memory."""
    return q.InsertMemories(
        namespace_ids=list(ns_of),
        content_hashes=list(hashes),
        contents=[m.content for m in cleaned],
        categories=[m.category for m in cleaned],
        tags_json=[_json(m.tags) for m in cleaned],
        importances=[m.importance for m in cleaned],
        expanded_keywords=[m.expanded_keywords for m in cleaned],
        sensitive=[m.is_sensitive for m in cleaned],
        sources=[m.source for m in cleaned],
        metadata=[m.metadata for m in cleaned],
        embeddings=[HalfVector(v.vector) if v is not None else None for v in vectors],
        embedding_models=[v.model_id if v is not None else None for v in vectors],
        has_secrets=[bool(placeholder_numbers(r.fields)) for r in redacted],
        pinned=[m.pinned for m in cleaned],
        valid_froms=[m.valid_from for m in cleaned],
        valid_tos=[m.valid_to for m in cleaned],
    )


def _episodes_batch(
    ns_of: Sequence[int],
    hashes: Sequence[bytes],
    cleaned: Sequence[MemoryIn],
    redacted: Sequence[RedactedFields],
    episodes: Sequence[EpisodeIn],
) -> q.InsertEpisodes:
    """The INSERT of these episodes, one list per column, one element per episode."""
    return q.InsertEpisodes(
        namespace_ids=list(ns_of),
        content_hashes=list(hashes),
        contents=[m.content for m in cleaned],
        categories=[m.category for m in cleaned],
        tags_json=[_json(m.tags) for m in cleaned],
        importances=[m.importance for m in cleaned],
        expanded_keywords=[m.expanded_keywords for m in cleaned],
        sensitive=[m.is_sensitive for m in cleaned],
        sources=[m.source for m in cleaned],
        metadata=[m.metadata for m in cleaned],
        has_secrets=[bool(placeholder_numbers(r.fields)) for r in redacted],
        expires_at=[as_utc(e.expires_at) for e in episodes],
        capture_keys=[e.capture_key for e in episodes],
        created_at=[as_utc(e.created_at) for e in episodes],
    )


async def _insert_alone(
    conn: asyncpg.Connection, insert: q.InsertMemories | q.InsertEpisodes, lookups: Sequence[NamedQuery]
) -> tuple[int, int, bool]:
    """One memory the batch's INSERT left out, inserted alone (a batch of one): (internal id, public
    id, duplicate). A duplicate answers the first twin `lookups` find. Neither inserted nor a twin
    means the random public id drawn was taken (or the twin went away meanwhile): inserting again
    draws another id."""
    for _ in range(INSERT_ATTEMPTS):
        row = await insert.fetchrow(conn)
        if row is not None:
            return row["id"], row["public_id"], False
        for lookup in lookups:
            twin = await lookup.fetchrow(conn)
            if twin is not None:
                return twin["id"], twin["public_id"], True
    raise RuntimeError(f"no memory inserted nor found after {INSERT_ATTEMPTS} attempts")


class MemoryStore:
    def __init__(self, writes: WritePath) -> None:
        self._w = writes

    async def store(self, user_id: int, items: Sequence[MemoryIn]) -> list[StoreResult]:
        w = self._w
        if len(items) > w.limits.max_batch:
            raise InvalidInput(f"a batch holds at most {w.limits.max_batch} memories, got {len(items)}")
        if not items:
            raise InvalidInput("the batch is empty")
        # Server-Timing phases (when on): prepare (checks, redaction), lookup (namespaces, duplicate
        # hashes), embed, sql (the INSERT transaction); they follow one another on the request's path.
        with timing.timed("prepare"):
            cleaned, redacted = w.prepare(items)
            hashes = [content_hash(m.content) for m in cleaned]

        with timing.timed("lookup"):
            async with w.db.write.acquire() as conn, conn.transaction():
                ns_ids = await w.namespace_ids(conn, user_id, (m.namespace for m in cleaned))
            ns_of = [ns_ids[m.namespace] for m in cleaned]

            existing = {
                (r["namespace_id"], bytes(r["content_hash"])): r["id"]
                for r in await q.ExistingHashes(namespace_ids=ns_of, content_hashes=hashes).fetch(w.db.write)
            }
        to_embed = [i for i in range(len(cleaned)) if (ns_of[i], hashes[i]) not in existing]
        with timing.timed("embed"):
            embedded, embed_error = await w.embed(
                [cleaned[i].content for i in to_embed], [cleaned[i].is_sensitive for i in to_embed]
            )
        vector_of = {i: e for i, e in zip(to_embed, embedded, strict=True) if e is not None}
        vectors = [vector_of.get(i) for i in range(len(cleaned))]

        results: list[StoreResult] = []
        jobs: list[NewJob] = []
        sealed: list[SealedSecret] = []
        with timing.timed("sql"):  # the INSERT transaction, commit included
            async with w.db.write.acquire() as conn, conn.transaction():
                batch = _memories_batch(ns_of, hashes, cleaned, redacted, vectors)
                inserted = {
                    (row["namespace_id"], bytes(row["content_hash"])): (row["id"], row["public_id"])
                    for row in await batch.fetch(conn)
                }
                # The automatic supersede's reads for the whole batch at once; good until a link is
                # made in this transaction (it ends an old memory's validity), then read again at
                # once for the memories not judged yet.
                verdicts = {}
                judged: list[int] = []
                if w.links.auto_supersede:
                    judged = list(
                        dict.fromkeys(  # a content given twice is one memory
                            inserted[key][0]
                            for i, key in enumerate(zip(ns_of, hashes, strict=True))
                            if key in inserted and vectors[i] is not None and not cleaned[i].supersedes
                        )
                    )
                    verdicts = await find_supersede_many(conn, judged, limit=w.links.supersede_candidates)
                judged_done: set[int] = set()
                linked = False
                for i, memory in enumerate(cleaned):
                    vector = vectors[i]
                    ids = inserted.pop((ns_of[i], hashes[i]), None)  # the first of a content given twice
                    if ids is not None:
                        (new_id, public_id), duplicate = ids, False
                    else:  # left out by the batch: its live twin, or inserted alone (public id drawn twice)
                        new_id, public_id, duplicate = await _insert_alone(
                            conn,
                            _memories_batch([ns_of[i]], [hashes[i]], [memory], [redacted[i]], [vector]),
                            [q.LiveIdByHash(namespace_id=ns_of[i], content_hash=hashes[i])],
                        )
                    # a duplicate's stored twin keeps its own originals; this one's are not kept
                    if not duplicate:
                        jobs += w.follow_up(new_id, memory.is_sensitive, vector is None, embed_error)
                        sealed += w.vault.seal(new_id, redacted[i].secrets)
                    superseded = [  # in this transaction: a refused link refuses the store
                        (await link(conn, user_id, public_id, "supersedes", old)).target_public_id
                        for old in memory.supersedes
                    ]
                    linked = linked or bool(superseded)
                    # what it replaces without anyone asking: only when the caller named nothing
                    found = AutoSupersede([], [])
                    if (
                        w.links.auto_supersede
                        and not duplicate
                        and vector is not None
                        and not memory.supersedes
                    ):
                        if linked:  # the verdicts read before a link may be stale: the rest again
                            rest = [m for m in judged if m not in judged_done]
                            verdicts = await find_supersede_many(
                                conn, rest, limit=w.links.supersede_candidates
                            )
                            linked = False
                        found = await auto_supersede(
                            conn,
                            new_id,
                            public_id,
                            auto_link(user_id),
                            limit=w.links.supersede_candidates,
                            found=verdicts.get(new_id),
                        )
                        judged_done.add(new_id)
                        linked = bool(found.superseded)
                    results.append(
                        StoreResult(
                            id=public_id,
                            namespace=memory.namespace,
                            duplicate=duplicate,
                            embedded=vector is not None,
                            superseded=superseded + found.superseded,
                            supersede_suggestions=[
                                SupersedeSuggestion(id=s.id, content=s.preview, reason=s.reason)
                                for s in found.suggestions
                            ],
                        )
                    )
                await insert_sealed(conn, sealed)  # the originals commit (or roll back) with their memories
                await w.jobs.add(conn, jobs)
        if jobs:
            w.jobs.wake()
        return results

    async def store_episodes(self, user_id: int, episodes: Sequence[EpisodeIn]) -> list[StoreResult]:
        """Store captured exchanges as `episode` memories: the checks and redaction of `store`, one
        transaction, one INSERT for the batch, and no embedding in the request: each new episode
        gets the durable embedding job (and indexing, like any memory), so a capture of hundreds of
        exchanges answers in milliseconds. An episode whose capture key the namespace holds already
        (deleted or not), or whose content it holds live, is a `duplicate` answering that memory's
        id. Results are in the order given. The capture route bounds the batch."""
        w = self._w
        if not episodes:
            return []
        # Credential detection over up to a request body of text is CPU work, growing with the text:
        # off the event loop, so prompt hooks and recalls arriving meanwhile are not held behind it.
        cleaned, redacted = await asyncio.to_thread(w.prepare, [e.memory for e in episodes])
        hashes = [content_hash(m.content) for m in cleaned]
        keys = [e.capture_key for e in episodes]
        async with w.db.write.acquire() as conn, conn.transaction():
            ns_ids = await w.namespace_ids(conn, user_id, (m.namespace for m in cleaned))
        ns_of = [ns_ids[m.namespace] for m in cleaned]

        results: list[StoreResult] = []
        jobs: list[NewJob] = []
        sealed: list[SealedSecret] = []
        async with w.db.write.acquire() as conn, conn.transaction():
            rows = await _episodes_batch(ns_of, hashes, cleaned, redacted, episodes).fetch(conn)
            inserted = {(r["namespace_id"], r["capture_key"]): (r["id"], r["public_id"]) for r in rows}
            left = [i for i in range(len(episodes)) if (ns_of[i], keys[i]) not in inserted]
            captured: dict[tuple[int, str], tuple[int, int]] = {}
            twins: dict[tuple[int, bytes], tuple[int, int]] = {}
            if left:
                left_ns = [ns_of[i] for i in left]
                captured = {
                    (r["namespace_id"], r["capture_key"]): (r["id"], r["public_id"])
                    for r in await q.Captured(
                        namespace_ids=left_ns, capture_keys=[keys[i] for i in left]
                    ).fetch(conn)
                }
                twins = {
                    (r["namespace_id"], bytes(r["content_hash"])): (r["id"], r["public_id"])
                    for r in await q.LiveByHashes(
                        namespace_ids=left_ns, content_hashes=[hashes[i] for i in left]
                    ).fetch(conn)
                }
            claimed: set[tuple[int, str]] = set()
            stored_ids: list[int] = []
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
                    new_id, public_id, duplicate = await _insert_alone(
                        conn,
                        _episodes_batch([ns_of[i]], [hashes[i]], [memory], [redacted[i]], [episode]),
                        [
                            q.Captured(namespace_ids=[ns_of[i]], capture_keys=[episode.capture_key]),
                            q.LiveIdByHash(namespace_id=ns_of[i], content_hash=hashes[i]),
                        ],
                    )
                if not duplicate:
                    jobs += w.follow_up(new_id, memory.is_sensitive, True, None)
                    sealed += w.vault.seal(new_id, redacted[i].secrets)
                    stored_ids.append(new_id)
                results.append(
                    StoreResult(id=public_id, namespace=memory.namespace, duplicate=duplicate, embedded=False)
                )
            jobs += await w.next_turns_again(conn, stored_ids)  # an earlier turn arriving late
            await insert_sealed(conn, sealed)
            await w.jobs.add(conn, jobs)
            if any(not r.duplicate for r in results):  # they expire: the sweep must be running
                await ensure_sweep(conn, w.limits.expiry_interval_s)
        if jobs:
            w.jobs.wake()
        return results
