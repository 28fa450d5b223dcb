"""Keeps the lexical leg's term statistics true: per namespace, how many memories hold each lexeme.

Recall weighs a query lexeme by its rarity in the scope (recall.sql, `lexical_idf`), read from
`term_counts` and `namespace_terms`, never from `memories`. A trigger enqueues `TERM_COUNT_JOB`
for a memory in the transaction of any change to what it is counted with (migration 0018); the
job, run by the worker pool (`app.jobs`), moves the counts by the difference between what the
memory was counted with (`memory_terms`) and what it holds now, and completes itself in the same
transaction. Counting is idempotent, so a retried or repeated job is harmless, and it never fails
a write: a store only adds a job row.

Lock order: the count locks of the memories' namespaces (transaction-scoped advisory locks, in
namespace order), then `memory_terms`, `term_counts`, `namespace_terms` and job rows. The DELETE
trigger of a purge takes the same count locks in the same order, but after the purge's cascade has
locked the memory's job rows: the job skips job rows it cannot lock instead of waiting for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import asyncpg

from app.db import transaction_with
from app.db.queries import NamedQuery
from app.jobs import Job

TERM_COUNT_JOB = "recall.term_counts"  # also written by migration 0018's triggers
TERM_LOCK_BASE = 0x6D74 << 48  # advisory lock key = base + namespace id (migration 0018 too)


class _TermQuery(NamedQuery):
    SQL_FILE: ClassVar[tuple[str, str]] = ("app.recall", "term_counts.sql")


@dataclass(frozen=True, slots=True, kw_only=True)
class LockTermNamespaces(_TermQuery):
    QUERY = "lock_term_namespaces"
    lock_base: int
    memory_ids: list[int]


@dataclass(frozen=True, slots=True, kw_only=True)
class CountTerms(_TermQuery):
    QUERY = "count_terms"
    memory_ids: list[int]
    locked: list[int]


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteEmptyTerms(_TermQuery):
    QUERY = "delete_empty_terms"
    lexemes: list[str]
    namespace_ids: list[int]


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingTermCounts(_TermQuery):
    QUERY = "pending_term_counts"
    limit: int


@dataclass(frozen=True, slots=True, kw_only=True)
class CompleteTermCounts(_TermQuery):
    QUERY = "complete_term_counts"
    memory_ids: list[int]


class NamespaceMoved(Exception):
    """A memory moved to a namespace whose count lock this transaction does not hold: the job is
    rolled back and runs again (then it takes that lock too)."""


class TermCounts:
    """Handler of `TERM_COUNT_JOB`; `count` also serves callers that bring memories up to date
    themselves (the quality bench after a store)."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def run(self, jobs: Sequence[Job]) -> None:
        await self.count(sorted({job.memory_id for job in jobs if job.memory_id is not None}))

    async def count(self, memory_ids: Sequence[int]) -> None:
        """Count these memories as they are now, completing their pending counting jobs with it.

        The commit does not wait for the WAL flush: a crash can lose only the whole transaction,
        counts and job completions together, and the jobs then run again."""
        if not memory_ids:
            return
        ids = sorted(memory_ids)
        async with (
            self._pool.acquire() as conn,
            transaction_with(conn, "SET LOCAL synchronous_commit = off", read_only=False),
        ):
            await count_in(conn, ids)

    async def count_pending(self, batch: int = 1000) -> int:
        """Count every memory that has a counting job, batch by batch, as the workers would: for
        commands and benchmarks that load memories with no worker running. Returns how many."""
        counted = 0
        while ids := await PendingTermCounts(limit=batch).fetch(self._pool):
            await self.count([r["memory_id"] for r in ids])
            counted += len(ids)
        return counted


async def count_in(conn: asyncpg.Connection, memory_ids: list[int]) -> None:
    """`TermCounts.count` inside the caller's transaction."""
    locked = [
        r["namespace_id"]
        for r in await LockTermNamespaces(lock_base=TERM_LOCK_BASE, memory_ids=memory_ids).fetch(conn)
    ]
    rows = await CountTerms(memory_ids=memory_ids, locked=locked).fetch(conn)
    skipped = [r["memory_id"] for r in rows if r["what"] == "skipped"]
    if skipped:
        raise NamespaceMoved(f"memories {skipped} moved to another namespace meanwhile")
    emptied = [r for r in rows if r["what"] == "emptied"]
    if emptied:
        await DeleteEmptyTerms(
            lexemes=[r["lexeme"] for r in emptied], namespace_ids=[r["namespace_id"] for r in emptied]
        ).execute(conn)
    await CompleteTermCounts(memory_ids=memory_ids).execute(conn)  # job rows last (the lock order)
