"""`MemoryService`: the memory domain's one face to its adapters (routes, MCP, UI, CLI, capture),
over its two paths, built here together on one database and one embedder:

- the write path: `WritePath` (checks, redaction, embedding, follow-up jobs: app/memories/writing.py),
  storing (`MemoryStore`, app/memories/store.py) and changing what is stored (`MemoryEdits`,
  app/memories/edits.py);
- the read and admin path (`MemoryReads`, app/memories/reads.py): get, list, the owner's read of
  sealed originals, internal ids.

Each method hands the call to the path it belongs to; the SQL of both is app/memories/memories.sql.
Every `memory_id` taken or answered is the memory's public id.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.db import Database
from app.embeddings import Embedder
from app.embeddings.inputs import NO_CONTEXT, TurnContext
from app.jobs import JobQueue
from app.links.settings import LinkSettings
from app.memories.edits import MemoryEdits
from app.memories.reads import ListFilters, MemoryReads, SecretsUnreadable, decode_cursor, encode_cursor
from app.memories.redaction import RedactedFields
from app.memories.schemas import Memory, MemoryIn, MemoryPage, MemoryPatch, MemorySecrets, StoreResult
from app.memories.settings import MemorySettings
from app.memories.store import EpisodeIn, MemoryStore
from app.memories.writing import WritePath, content_hash, given
from app.namespaces.settings import NamespaceSettings
from app.secrets import SecretSettings

__all__ = [
    "EpisodeIn",
    "ListFilters",
    "MemoryService",
    "SecretsUnreadable",
    "content_hash",
    "decode_cursor",
    "encode_cursor",
    "given",
]


class MemoryService:
    def __init__(
        self,
        db: Database,
        embedder: Embedder,
        limits: MemorySettings,
        jobs: JobQueue | None = None,
        index_graph: bool = True,
        secrets: SecretSettings | None = None,
        links: LinkSettings | None = None,
        namespaces: NamespaceSettings | None = None,
        turn_context: TurnContext = NO_CONTEXT,
    ) -> None:
        """See `WritePath` for `jobs`, `index_graph`, `secrets`, `links`, `namespaces` and
        `turn_context`; the read path opens sealed originals with the same keys."""
        writes = WritePath(db, embedder, limits, jobs, index_graph, secrets, links, namespaces, turn_context)
        self.reads = MemoryReads(db, writes.vault)
        self.writes = writes
        self._store = MemoryStore(writes)
        self._edits = MemoryEdits(writes, self.reads)

    # the write path

    async def store(self, user_id: int, items: Sequence[MemoryIn]) -> list[StoreResult]:
        return await self._store.store(user_id, items)

    async def store_episodes(self, user_id: int, episodes: Sequence[EpisodeIn]) -> list[StoreResult]:
        return await self._store.store_episodes(user_id, episodes)

    def prepare(self, items: Sequence[MemoryIn]) -> tuple[list[MemoryIn], list[RedactedFields]]:
        return self.writes.prepare(items)

    def check_name(self, name: str, where: str) -> None:
        self.writes.check_name(name, where)

    async def update(
        self, user_id: int, memory_id: int, patch: MemoryPatch, *, promote: bool = False
    ) -> Memory:
        return await self._edits.update(user_id, memory_id, patch, promote=promote)

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
        return await self._edits.promote(
            user_id, memory_id, importance=importance, pinned=pinned, category=category, tags=tags
        )

    async def delete(self, user_id: int, memory_id: int, purge: bool = False) -> None:
        await self._edits.delete(user_id, memory_id, purge)

    async def restore(self, user_id: int, memory_id: int) -> Memory:
        return await self._edits.restore(user_id, memory_id)

    # the read and admin path

    async def get(self, user_id: int, memory_id: int, include_deleted: bool = False) -> Memory:
        return await self.reads.get(user_id, memory_id, include_deleted)

    async def list(
        self, user_id: int, filters: ListFilters, limit: int, cursor: str | None = None
    ) -> MemoryPage:
        return await self.reads.list(user_id, filters, limit, cursor)

    async def read_secrets(
        self, user_id: int, memory_id: int, key_id: int | None, client: str | None
    ) -> MemorySecrets:
        return await self.reads.read_secrets(user_id, memory_id, key_id, client)

    async def internal_ids(self, public_ids: Sequence[int]) -> Sequence[int]:
        return await self.reads.internal_ids(public_ids)
