"""Live-memory counts per namespace, cached briefly: whether a recall's scope is small.

A small scope is scanned exactly by the dense leg and read through its namespaces' index by the
lexical leg; a big one goes through the HNSW and text indexes. A count that is a minute old is as
good as a fresh one for that, and counting 50k rows is not free.
"""

from __future__ import annotations

import math
import time

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


class ScopeSizes:
    """Whether namespaces together hold fewer than `threshold` live memories, from counts at most
    `ttl_s` seconds old."""

    def __init__(self, threshold: int, ttl_s: float) -> None:
        self._threshold = threshold
        self._ttl_s = ttl_s
        self._counts: dict[int, tuple[float, int]] = {}

    async def is_small(self, conn: asyncpg.Connection, namespace_ids: list[int]) -> bool:
        if not namespace_ids:
            return True  # nothing to read: the big-scope path would read every text match to learn it
        if self._threshold <= 0:
            return False
        now = time.monotonic()
        stale = [n for n in namespace_ids if now - self._counts.get(n, (-math.inf, 0))[0] > self._ttl_s]
        if stale:
            rows = await conn.fetch(_COUNT_SQL, stale, self._threshold)
            fresh = {r["namespace_id"]: r["n"] for r in rows}
            for namespace_id in stale:
                self._counts[namespace_id] = (now, fresh.get(namespace_id, 0))
        return sum(self._counts[n][1] for n in namespace_ids) < self._threshold
