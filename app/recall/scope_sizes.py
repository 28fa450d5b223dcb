"""Live-memory counts per namespace, cached briefly: whether a recall's scope is small.

A small scope is scanned exactly by the dense leg and read namespace by namespace by the lexical
leg (the per-namespace indexes of migration 0011); a big one goes through the HNSW and text
indexes. A count that is a minute old is as good as a fresh one for that, and counting 50k rows is
not free.

The lexical leg has a threshold of its own: the scope's share of the table. The table-wide text
index yields every namespace's matches, and the leg keeps the scope's, so a scope that holds a
sixth of the table reads six rows for each one it ranks; asked namespace by namespace, the index
yields the scope's alone. Only when the scope is most of the table is that detour dearer than the
rows it saves (`memoria bench latency --mid-scope` times a scope between the two; see
docs/benchmarks/). The share comes from the planner's statistics (`pg_stats` of `memories.namespace_id`), read
with the table's size, so it costs no count: a namespace among the most common values has its
sampled share, any other an equal part of the rest.

What counts as small grows with the table. The exact scan costs in proportion to the scope's rows
(an index-only scan of its vectors). The filtered HNSW walk costs in proportion to the rows it
passes for each one in scope, the table's over the scope's, so a scope that is a small share of a
big table is cheaper to scan exactly than to walk. The two costs cross where scope² ∝ table, so the threshold
is `per_sqrt_table` x √(table rows), never below the fixed floor.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import asyncpg

# Counting stops at the threshold: only "below or not" matters.
_COUNT_SQL = """
SELECT s.namespace_id, (
    SELECT count(*) FROM (
        SELECT 1 FROM memories m
        WHERE m.namespace_id = s.namespace_id AND m.deleted_at IS NULL
        LIMIT $2
    ) capped
) AS n
FROM unnest($1::bigint[]) AS s (namespace_id)
"""

# The planner's estimates (as of the last ANALYZE, deleted rows included: the HNSW walk passes
# them too): the table's rows (reltuples is -1 before the first ANALYZE) and how they spread over
# namespaces (no pg_stats row before it).
_TABLE_SQL = """
SELECT greatest(c.reltuples, 0)::bigint AS rows,
       s.most_common_vals::text::bigint[] AS common_ids,
       s.most_common_freqs AS common_shares,
       s.n_distinct,
       s.null_frac
FROM pg_class c
LEFT JOIN pg_stats s
       ON s.schemaname = current_schema() AND s.tablename = 'memories' AND s.attname = 'namespace_id'
      AND NOT s.inherited
WHERE c.oid = 'memories'::regclass
"""


@dataclass(frozen=True, slots=True)
class _Count:
    at: float
    rows: int
    cap: int  # counting stopped here: `rows == cap` means "cap or more"

    def below(self, threshold: int) -> bool | None:
        """Whether the namespace holds fewer than `threshold` rows; None when this count cannot tell."""
        if self.rows < self.cap or self.cap >= threshold:
            return self.rows < threshold
        return None


@dataclass(frozen=True, slots=True)
class _Table:
    at: float
    rows: int
    shares: dict[int, float]  # the namespaces among the most common values, and their share
    other_share: float | None  # any other namespace's; None before the first ANALYZE

    @classmethod
    def read(cls, at: float, row: asyncpg.Record | None) -> _Table:
        if row is None:
            return cls(at, 0, {}, None)
        if row["n_distinct"] is None:  # not analysed yet
            return cls(at, int(row["rows"]), {}, None)
        shares = dict(zip(row["common_ids"] or [], row["common_shares"] or [], strict=True))
        # n_distinct below 0 is a share of the rows: the count grows with the table
        distinct = row["n_distinct"] if row["n_distinct"] > 0 else -row["n_distinct"] * row["rows"]
        rest = max(1.0 - row["null_frac"] - sum(shares.values()), 0.0)
        return cls(at, int(row["rows"]), shares, rest / max(distinct - len(shares), 1.0))

    def share(self, namespace_ids: list[int]) -> float | None:
        """The planner's estimate of the share of the table these namespaces hold."""
        if self.other_share is None:
            return None
        return sum(self.shares.get(n, self.other_share) for n in namespace_ids)


@dataclass(frozen=True, slots=True)
class ScopeReads:
    """How the recall statement reads a scope (its :small_scope and :text_by_namespace)."""

    small: bool  # exact dense scan, text read namespace by namespace
    text_by_namespace: bool  # the lexical tiers ask the text index namespace by namespace
    few_namespaces: bool = True  # those reads go one namespace at a time, else all in one scan


class ScopeSizes:
    """Whether namespaces together hold fewer than the small-scope threshold of live memories, from
    counts and a table size at most `ttl_s` seconds old; and whether they hold less than
    `text_by_namespace_below` of the table (planner statistics as old)."""

    def __init__(
        self,
        floor: int,
        per_sqrt_table: float,
        ttl_s: float,
        text_by_namespace_below: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
        per_namespace_max: int = 16,
    ) -> None:
        self._clock = clock
        self._per_namespace_max = per_namespace_max
        self._floor = floor
        self._per_sqrt_table = per_sqrt_table
        self._ttl_s = ttl_s
        self._text_by_namespace_below = text_by_namespace_below
        self._counts: dict[int, _Count] = {}
        self._table = _Table(-math.inf, 0, {}, None)

    @property
    def table_rows(self) -> int:
        """The table's rows as of the last read (the planner's estimate; 0 before the first)."""
        return self._table.rows

    @property
    def threshold(self) -> int:
        """Scopes with fewer live memories than this are small (as of the last table size read)."""
        if self._floor <= 0:
            return 0  # exact scans are off
        return max(self._floor, int(self._per_sqrt_table * math.sqrt(self._table.rows)))

    async def reads(self, conn: asyncpg.Connection, namespace_ids: list[int]) -> ScopeReads:
        """How to read the scope: small (`is_small`), the text namespace by namespace when small
        or when it holds less than `text_by_namespace_below` of the table; and either only while
        it has at most `per_namespace_max` namespaces (recall.sql's [namespace count]): past that,
        the text is read table-wide and the exact scan reads every namespace in one scan."""
        few = len(namespace_ids) <= self._per_namespace_max
        if await self.is_small(conn, namespace_ids):
            return ScopeReads(small=True, text_by_namespace=few, few_namespaces=few)
        share = self._table.share(namespace_ids)
        return ScopeReads(
            small=False,
            text_by_namespace=few and share is not None and share < self._text_by_namespace_below,
            few_namespaces=few,
        )

    async def is_small(self, conn: asyncpg.Connection, namespace_ids: list[int]) -> bool:
        if not namespace_ids:
            return True  # nothing to read: the big-scope path would read every text match to learn it
        now = self._clock()
        if now - self._table.at > self._ttl_s:
            self._table = _Table.read(now, await conn.fetchrow(_TABLE_SQL))
        if self._floor <= 0:
            return False
        threshold = self.threshold
        stale = [
            n
            for n in namespace_ids
            if (count := self._counts.get(n)) is None
            or now - count.at > self._ttl_s
            or count.below(threshold) is None
        ]
        if stale:
            rows = await conn.fetch(_COUNT_SQL, stale, threshold)
            fresh = {r["namespace_id"]: r["n"] for r in rows}
            for namespace_id in stale:
                self._counts[namespace_id] = _Count(now, fresh.get(namespace_id, 0), threshold)
        return sum(min(self._counts[n].rows, threshold) for n in namespace_ids) < threshold
