"""Keeps the concept graph in step with memories: extract on store/update, unlink on change/delete.

Indexing is a durable job (`INDEX_JOB`, one row per memory in the `jobs` table), written in the
transaction that stores or changes the memory and run by the worker pool (`app.jobs`); the
transaction that links a memory also deletes its pending indexing jobs, so a crash either loses
both or neither. A job never fails a store, and a job whose memory was deleted meanwhile does
nothing. Unlinking runs inside the delete's or change's own transaction, so a deleted memory never
stays evidence of anything and a memory that became sensitive leaves the graph at once.

Lock order, everywhere: the namespace's graph lock (`lock_graph`, a transaction-scoped advisory
lock) first, then memory rows, then concept, edge and job rows. Stores, changes, deletes and
indexing of one namespace therefore queue behind each other instead of deadlocking.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import asyncpg
from pgvector import HalfVector

from app.db import transaction_with
from app.embeddings import Embedder, EmbeddingError
from app.graph import sql
from app.graph.extract import Concept, extract_concepts
from app.graph.settings import GraphSettings
from app.jobs import Job, NewJob, complete_for_memories

log = logging.getLogger(__name__)

GRAPH_LOCK_BASE = 0x6D67 << 48  # advisory lock key = base + namespace id
INDEX_JOB = "graph.index"


def indexing_jobs(memory_ids: Sequence[int]) -> list[NewJob]:
    """The jobs that link these (stored or changed) memories to their concepts."""
    return [NewJob(INDEX_JOB, memory_id) for memory_id in memory_ids]


async def lock_graph(conn: asyncpg.Connection, namespace_ids: set[int]) -> None:
    """Serialise graph writes per namespace (transaction-scoped), so concurrent indexing, changes and
    deletes never deadlock on shared concept and edge rows. Take it before any memory row lock."""
    await conn.execute(sql.LOCK_GRAPHS, sorted(namespace_ids), GRAPH_LOCK_BASE)


async def unlink_memories(conn: asyncpg.Connection, memory_ids: Sequence[int]) -> None:
    """Remove the memories' concept links, edge evidence and counts. The caller owns the transaction
    and holds the graph locks of the memories' namespaces (`lock_graph`); a purge unlinks before it
    deletes the row (the cascade would drop the links without taking back their counts)."""
    ids = list(memory_ids)
    await conn.execute(sql.COUNT_GRAPH_MEMORIES, ids, -1)
    await conn.execute(sql.COUNT_DOC_FREQ, ids, -1)
    weakened = await conn.fetch(sql.WEAKEN_EDGES, ids)
    dead = [r["id"] for r in weakened if r["weight"] <= 0]
    if dead:
        await conn.execute(sql.DELETE_EDGES, dead)
    concept_ids = [r["concept_id"] for r in await conn.fetch(sql.DELETE_LINKS, ids)]
    if concept_ids:
        await conn.execute(sql.DROP_ORPHAN_CONCEPTS, sorted(set(concept_ids)))


class GraphIndexer:
    def __init__(self, pool: asyncpg.Pool, embedder: Embedder | None, settings: GraphSettings) -> None:
        self._pool = pool
        self._embedder = embedder
        self._settings = settings

    async def run_jobs(self, jobs: Sequence[Job]) -> None:
        """Handler of `INDEX_JOB`: link memories that have no links yet. A memory changed since its
        job was written was unlinked by that change, so it is indexed with what it says now; one
        already linked, deleted or sensitive is left as it is. Completes the jobs with the links."""
        await self.index([job.memory_id for job in jobs if job.memory_id is not None], fresh=True)

    async def index(
        self,
        memory_ids: Sequence[int],
        conn: asyncpg.Connection | None = None,
        canonicalise: bool = True,
        fresh: bool = False,
    ) -> int:
        """(Re)extract concepts of live memories; returns the number of links written.

        `canonicalise=False` skips the embedding-based merge (used when a merge re-links memories);
        `fresh=True` links only memories without links (nothing to unlink) and leaves linked ones be.
        Either way the memories' pending indexing jobs are completed in the same transaction.
        """
        if not memory_ids or not self._settings.enabled:
            return 0
        if conn is None:
            # The commit does not wait for the WAL flush (most of a small transaction's time): a crash
            # can lose only the whole transaction, links and the completion of their jobs together,
            # so the jobs run again. The memory and its jobs were committed durably.
            async with self._pool.acquire() as own:
                async with transaction_with(own, "SET LOCAL synchronous_commit = off", read_only=False):
                    links, new_concepts = await self._link(own, memory_ids, fresh)
                await self._embed_and_canonicalise(own, new_concepts, canonicalise)
                return links
        async with conn.transaction():
            links, new_concepts = await self._link(conn, memory_ids, fresh)
        await self._embed_and_canonicalise(conn, new_concepts, canonicalise)
        return links

    async def _link(
        self, conn: asyncpg.Connection, memory_ids: Sequence[int], fresh: bool
    ) -> tuple[int, list[tuple[int, int, str]]]:
        """Extract and link inside the caller's transaction; returns (links written, new concepts)."""
        await conn.fetch(sql.LOCK_GRAPHS_OF_MEMORIES, list(memory_ids), GRAPH_LOCK_BASE)
        if not fresh:
            await unlink_memories(conn, memory_ids)
        query = sql.UNLINKED_MEMORIES_TO_INDEX if fresh else sql.MEMORIES_TO_INDEX
        rows = await conn.fetch(query, list(memory_ids))
        extracted = {
            r["id"]: extract_concepts(
                r["content"], r["tags"], r["expanded_keywords"], self._settings.max_concepts_per_memory
            )
            for r in rows
        }
        namespace_of = {r["id"]: r["namespace_id"] for r in rows}
        concept_ids, new_concepts = await self._upsert_concepts(conn, extracted, namespace_of)
        links = [
            (memory_id, concept_ids[(namespace_of[memory_id], c.name)])
            for memory_id, concepts in extracted.items()
            for c in concepts
        ]
        links = list(dict.fromkeys(links))
        if links:
            await conn.execute(
                sql.LINK_AND_COUNT,
                [m for m, _ in links],
                [c for _, c in links],
                self._settings.evidence_ids_kept,
            )
        await complete_for_memories(conn, INDEX_JOB, memory_ids)  # job rows last (the lock order)
        return len(links), new_concepts

    async def _upsert_concepts(
        self,
        conn: asyncpg.Connection,
        extracted: dict[int, list[Concept]],
        namespace_of: dict[int, int],
    ) -> tuple[dict[tuple[int, str], int], list[tuple[int, int, str]]]:
        wanted: dict[tuple[int, str], Concept] = {}
        for memory_id, concepts in extracted.items():
            for concept in concepts:
                wanted.setdefault((namespace_of[memory_id], concept.name), concept)
        keys = list(wanted)
        ids: dict[tuple[int, str], int] = {}
        new: list[tuple[int, int, str]] = []
        if not keys:
            return ids, new
        rows = await conn.fetch(
            sql.RESOLVE_CONCEPTS,
            [k[0] for k in keys],
            [k[1] for k in keys],
            [wanted[k].display for k in keys],
            [wanted[k].kind for k in keys],
        )
        for r in rows:
            ids[(r["namespace_id"], r["name"])] = r["id"]
            if r["inserted"]:
                new.append((r["id"], r["namespace_id"], wanted[(r["namespace_id"], r["name"])].display))
        return ids, new

    async def _embed_and_canonicalise(
        self, conn: asyncpg.Connection, new_concepts: list[tuple[int, int, str]], canonicalise: bool
    ) -> None:
        """Embed new concepts (for query seeding) and fold near-duplicates into existing concepts."""
        if self._embedder is None or not new_concepts:
            return
        try:
            vectors = await self._embedder.embed_documents([display for _, _, display in new_concepts])
        except EmbeddingError:
            log.warning("concept embedding failed; concepts stay name-only", exc_info=True)
            return
        await conn.execute(
            sql.SET_CONCEPT_EMBEDDINGS, [cid for cid, _, _ in new_concepts], [HalfVector(v) for v in vectors]
        )
        threshold = self._settings.merge_similarity
        if threshold >= 1 or not canonicalise:
            return
        for (concept_id, namespace_id, _), vector in zip(new_concepts, vectors, strict=True):
            nearest = await conn.fetchrow(sql.NEAREST_CONCEPT, namespace_id, HalfVector(vector), concept_id)
            if nearest is not None and nearest["similarity"] >= threshold:
                await merge_concepts(conn, self, concept_id, nearest["id"])


async def merge_concepts(
    conn: asyncpg.Connection, indexer: GraphIndexer, source_id: int, target_id: int
) -> None:
    """Fold concept `source_id` into `target_id`: its names become aliases, its memories re-link."""
    async with conn.transaction():
        source = await conn.fetchrow(
            "SELECT name, aliases, namespace_id FROM concepts WHERE id = $1", source_id
        )
        if source is None:
            return
        await lock_graph(conn, {source["namespace_id"]})
        memory_ids = [
            r["memory_id"]
            for r in await conn.fetch(
                "SELECT memory_id FROM memory_concepts WHERE concept_id = $1", source_id
            )
        ]
        await conn.execute(sql.ADD_ALIASES, target_id, [source["name"], *source["aliases"]])
        await unlink_memories(conn, memory_ids)
        await conn.execute("DELETE FROM concepts WHERE id = $1", source_id)
        if memory_ids:
            await indexer.index(memory_ids, conn, canonicalise=False)
