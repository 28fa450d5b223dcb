"""Changing what is stored: update (and promote, an update that makes a memory curated), delete
and restore.

Writes that touch the graph take the namespace's graph lock before the memory row, the one lock
order of every graph writer, so they never deadlock with the worker indexing the same memory.
Every `memory_id` taken here is the memory's public id: the first query of each path looks the
memory up by it, and everything after uses the internal id.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import asyncpg
import msgspec
from msgspec import UNSET, UnsetType
from pgvector import HalfVector

from app.embeddings import Embedded
from app.embeddings.inputs import embedded_as_content
from app.errors import Conflict, InvalidInput, NotFound
from app.graph import lock_graph, unlink_memories
from app.jobs import NewJob
from app.links import source_deleted, source_restored
from app.memories import queries as q
from app.memories.reads import MemoryReads
from app.memories.redaction import TEXT_FIELDS, placeholder_numbers
from app.memories.schemas import Memory, MemoryPatch
from app.memories.validation import check_validity, clean_patch
from app.memories.writing import WritePath, content_hash, given
from app.namespaces import writable_namespace
from app.secrets import insert_sealed, keep_sealed


def _given_fields(patch: MemoryPatch) -> dict[str, Any]:
    """The free-text fields a PATCH sets (to a value or to null)."""
    return {name: getattr(patch, name) for name in TEXT_FIELDS if given(getattr(patch, name))}


def _validity_after(patch: MemoryPatch, current: Memory) -> tuple[datetime | None, datetime | None]:
    """The memory's validity once the patch is applied (a field the patch sets, or the stored one)."""
    valid_from = current.valid_from if isinstance(patch.valid_from, UnsetType) else patch.valid_from
    valid_to = current.valid_to if isinstance(patch.valid_to, UnsetType) else patch.valid_to
    return valid_from, valid_to


class MemoryEdits:
    def __init__(self, writes: WritePath, reads: MemoryReads) -> None:
        self._w = writes
        self._reads = reads

    async def update(
        self, user_id: int, memory_id: int, patch: MemoryPatch, *, promote: bool = False
    ) -> Memory:
        """Change a memory. The fields it sets are redacted like a store's, new credentials numbered
        after the placeholders the memory holds; under the row lock, originals whose placeholder no
        longer appears in any field are deleted and the new ones sealed, in the change's transaction.
        `promote`: also make it a curated memory that never expires (see `promote`)."""
        w = self._w
        patch = clean_patch(patch, w.limits)
        current = await self._reads.get(user_id, memory_id)
        before = {name: getattr(current, name) for name in TEXT_FIELDS}
        changes = _given_fields(patch)
        planned = w.redacted(changes, used=sorted(placeholder_numbers(before)))
        patch = msgspec.structs.replace(patch, **planned.fields)
        new_content = patch.content if isinstance(patch.content, str) else None
        if new_content == current.content:
            new_content = None
        is_sensitive = patch.is_sensitive if isinstance(patch.is_sensitive, bool) else current.is_sensitive
        vector: Embedded | None = None
        embed_error: str | None = None
        if new_content is not None:
            (vector,), embed_error = await w.embed([new_content], [is_sensitive])
        # Re-extract only when something the extractor reads (or its sensitivity filter) changed.
        regraph = any(
            given(value) for value in (patch.content, patch.tags, patch.expanded_keywords, patch.is_sensitive)
        )

        jobs: list[NewJob] = []
        async with w.db.write.acquire() as conn, conn.transaction():
            # 404 when not the caller's to see, 403 when shared with them read-only
            row = await q.LiveNamespace(user_id=user_id, public_id=memory_id).fetchrow(conn)
            namespace_id = writable_namespace(row, f"memory {memory_id}")
            assert row is not None  # writable_namespace refused it otherwise
            internal_id: int = row["id"]  # `memory_id` is the public id; the writes use this one
            if regraph:
                await lock_graph(conn, {namespace_id})  # before the memory row: the lock order
            locked = await q.LockMemory(memory_id=internal_id, user_id=user_id).fetchrow(conn)
            if locked is None:
                raise NotFound(f"memory {memory_id} not found")
            if vector is not None and not embedded_as_content(w.turn_context, locked["captured"]):
                # a captured turn is embedded with its neighbourhood: the embedding job computes it
                vector, embed_error = None, None
            stored_row = await q.LockedText(memory_id=internal_id).fetchrow(conn)
            stored = dict(stored_row) if stored_row is not None else {}
            final = planned
            if stored != before:  # changed since it was read: number after what it holds now
                final = w.redacted(changes, used=sorted(placeholder_numbers(stored)))
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
                clash = await q.LiveIdByHash(
                    namespace_id=locked["namespace_id"], content_hash=new_hash
                ).fetchrow(conn)
                if clash is not None and clash["id"] != internal_id:
                    other = clash["public_id"]
                    raise Conflict(
                        f"memory {other} in this namespace already has this content", existing_id=other
                    )
            if regraph:
                # its evidence leaves the graph with this change; the indexing job links it anew
                await unlink_memories(conn, [internal_id])
            check_validity(*_validity_after(patch, current))
            if given(patch.valid_to) and current.superseded_by is not None:
                # its end is the supersede's: a valid_to set by hand would bring it back beside its successor
                raise Conflict(
                    f"memory {memory_id} is superseded by {current.superseded_by}, which set its valid_to: "
                    "undo that link to change it",
                    existing_id=current.superseded_by,
                )
            updated = await q.UpdateMemory(
                content=new_content,
                content_hash=new_hash,
                set_embedding=new_content is not None,
                embedding=HalfVector(vector.vector) if vector is not None else None,
                embedding_model=vector.model_id if vector is not None else None,
                set_category=given(patch.category),
                category=patch.category if isinstance(patch.category, str) else None,
                tags=patch.tags if isinstance(patch.tags, list) else None,
                importance=patch.importance if isinstance(patch.importance, float | int) else None,
                promote=promote,
                set_expanded_keywords=given(patch.expanded_keywords),
                expanded_keywords=patch.expanded_keywords
                if isinstance(patch.expanded_keywords, str)
                else None,
                is_sensitive=patch.is_sensitive if isinstance(patch.is_sensitive, bool) else None,
                set_source=given(patch.source),
                source=patch.source if isinstance(patch.source, str) else None,
                metadata=patch.metadata if isinstance(patch.metadata, dict) else None,
                has_secrets=bool(kept),
                pinned=patch.pinned if isinstance(patch.pinned, bool) else None,
                set_valid_from=given(patch.valid_from),
                valid_from=patch.valid_from if isinstance(patch.valid_from, datetime) else None,
                set_valid_to=given(patch.valid_to),
                valid_to=patch.valid_to if isinstance(patch.valid_to, datetime) else None,
                memory_id=internal_id,
            ).fetchrow(conn)
            if changes:
                # an original lives exactly as long as its placeholder does, in some field
                await keep_sealed(conn, internal_id, kept)
                new = [secret for secret in final.secrets if secret.number in kept]
                await insert_sealed(conn, w.vault.seal(internal_id, new))
            if regraph and updated is not None:
                # a vector is due when the text changed or the memory stopped being sensitive
                needs_vector = updated["unembedded"] and (
                    new_content is not None or given(patch.is_sensitive)
                )
                jobs = w.follow_up(internal_id, updated["is_sensitive"], needs_vector, embed_error)
                if locked["captured"] and (new_content is not None or given(patch.is_sensitive)):
                    jobs += await w.next_turns_again(conn, [internal_id])
                await w.jobs.add(conn, jobs)
        if jobs:
            w.jobs.wake()
        return await self._reads.get(user_id, memory_id)

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

    async def delete(self, user_id: int, memory_id: int, purge: bool = False) -> None:
        """Soft delete or purge; the memory's concept-graph evidence goes in the same transaction.

        The graph lock comes before the memory row lock, as in every graph writer: taking the row
        first deadlocked with the worker indexing a just-stored memory (issue #15). A purge
        cascades the memory's pending jobs away; a soft-deleted memory's jobs end as no-ops."""
        async with self._w.db.write.acquire() as conn, conn.transaction():
            row = await q.OwnedNamespace(user_id=user_id, public_id=memory_id).fetchrow(conn)
            namespace_id = writable_namespace(row, f"memory {memory_id}")  # 404, or 403 if read-only
            assert row is not None  # writable_namespace refused it otherwise
            internal_id: int = row["id"]  # `memory_id` is the public id; the writes use this one
            await lock_graph(conn, {namespace_id})
            if await q.LockOwnedMemory(memory_id=internal_id).fetchval(conn) is None:
                raise NotFound(f"memory {memory_id} not found")  # purged while we waited
            await unlink_memories(conn, [internal_id])
            await source_deleted(conn, internal_id)  # what it superseded holds again
            jobs = await self._w.next_turns_again(conn, [internal_id])  # before a purge takes the row
            remove = q.Purge if purge else q.SoftDelete
            await remove(memory_id=internal_id, user_id=user_id).execute(conn)
            await self._w.jobs.add(conn, jobs)
        if jobs:
            self._w.jobs.wake()

    async def restore(self, user_id: int, memory_id: int) -> Memory:
        """Undo a soft delete (the UI's "Undo" after "Forget"): the memory is live again and its
        concepts are indexed anew (a soft delete took its graph evidence away). 409 when a live memory
        of the namespace has the same content by now; a memory that is not deleted is left as it is."""
        w = self._w
        jobs: list[NewJob] = []
        async with w.db.write.acquire() as conn, conn.transaction():
            row = await q.OwnedNamespace(user_id=user_id, public_id=memory_id).fetchrow(conn)
            writable_namespace(row, f"memory {memory_id}")  # 404, or 403 if read-only
            assert row is not None  # writable_namespace refused it otherwise
            internal_id: int = row["id"]
            if await q.LockOwnedMemory(memory_id=internal_id).fetchval(conn) is None:
                raise NotFound(f"memory {memory_id} not found")  # purged meanwhile
            try:
                async with conn.transaction():  # a savepoint: the clash is looked up after it failed
                    restored = await q.Restore(memory_id=internal_id, user_id=user_id).fetchrow(conn)
            except asyncpg.UniqueViolationError:
                clash = await q.LiveClash(memory_id=internal_id).fetchrow(conn)
                other = clash["public_id"] if clash is not None else None
                raise Conflict(
                    f"memory {other} in this namespace has the same content: restoring this one "
                    "would make two",
                    existing_id=other,
                ) from None
            if restored is not None:
                await source_restored(conn, internal_id)  # what it superseded stops holding again
                jobs = w.follow_up(internal_id, restored["is_sensitive"], restored["unembedded"], None)
                jobs += await w.next_turns_again(conn, [internal_id])
                await w.jobs.add(conn, jobs)
        if jobs:
            w.jobs.wake()
        return await self._reads.get(user_id, memory_id)
