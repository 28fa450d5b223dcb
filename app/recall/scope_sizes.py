"""Live-memory counts per namespace, cached briefly: whether a recall's scope is small.

A small scope is scanned exactly by the dense leg and read namespace by namespace by the lexical
leg (the per-namespace indexes of migration 0011); a big one goes through the HNSW and text
indexes. A count that is a minute old is as good as a fresh one for that, and counting 50k rows is
not free.

What counts as small grows with the table. The exact scan costs in proportion to the scope's rows
(an index-only scan of its vectors, ~0.7 µs a row here). The filtered HNSW walk costs in
proportion to the rows it passes for each one in scope, the table's over the scope's: at 1M rows
a 19.5k-row scope took 44-50 ms that way against 13 ms exactly, a 35k one 39 against 27, while at
100k rows a 50k scope walked in 5 ms. The two costs cross where scope² ∝ table, so the threshold
is `per_sqrt_table` x √(table rows), never below the fixed floor.
"""

from __future__ import annotations

import math
import time
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

# The planner's estimate (as of the last ANALYZE, deleted rows included: the HNSW walk passes
# them too); -1 before the first ANALYZE.
_TABLE_ROWS_SQL = "SELECT greatest(reltuples, 0)::bigint FROM pg_class WHERE oid = 'memories'::regclass"


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


class ScopeSizes:
    """Whether namespaces together hold fewer than the small-scope threshold of live memories, from
    counts and a table size at most `ttl_s` seconds old."""

    def __init__(self, floor: int, per_sqrt_table: float, ttl_s: float) -> None:
        self._floor = floor
        self._per_sqrt_table = per_sqrt_table
        self._ttl_s = ttl_s
        self._counts: dict[int, _Count] = {}
        self._table_rows: tuple[float, int] = (-math.inf, 0)

    @property
    def threshold(self) -> int:
        """Scopes with fewer live memories than this are small (as of the last table size read)."""
        if self._floor <= 0:
            return 0  # exact scans are off
        return max(self._floor, int(self._per_sqrt_table * math.sqrt(self._table_rows[1])))

    async def is_small(self, conn: asyncpg.Connection, namespace_ids: list[int]) -> bool:
        if not namespace_ids:
            return True  # nothing to read: the big-scope path would read every text match to learn it
        if self._floor <= 0:
            return False
        now = time.monotonic()
        if now - self._table_rows[0] > self._ttl_s:
            self._table_rows = (now, int(await conn.fetchval(_TABLE_ROWS_SQL) or 0))
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
