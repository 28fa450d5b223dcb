"""Recall@10 of the dense leg's HNSW search against exact search: what the index gives away."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pgvector import HalfVector

from app.db import Database
from app.embeddings import Embedder
from app.recall.schemas import RecallRequest
from memoria_bench.config import BenchConfig
from memoria_bench.latency.scopes import Scope
from memoria_bench.modes import DENSE, MODE_WEIGHTS

# Two memories at the same distance to within this are equally right answers (ann-benchmarks'
# threshold). Synthetic memories that differ only in a name or a date lie that close, so a walk that
# returns ten of a cluster's near twins instead of the exact ten scores 0.0 strictly and 1.0 here.
TIE_EPSILON = 1e-3
WORST_KEPT = 5
"""Queries with the lowest strict recall kept in the report, with their text."""

# The dense leg's population (live, not sensitive, embedded by this model), ranked exactly.
_EXACT_SQL = """
SELECT m.public_id, m.embedding <=> $2::halfvec AS distance FROM memories m
WHERE m.namespace_id = ANY($1::bigint[]) AND m.deleted_at IS NULL AND m.is_sensitive = false
  AND m.embedding IS NOT NULL AND m.embedding_model = $4
ORDER BY (m.embedding <=> $2::halfvec) + 0, m.id
LIMIT $3
"""


async def hnsw_recall(
    db: Database, embedder: Embedder, config: BenchConfig, user_id: int, scope: Scope, queries: Sequence[str]
) -> dict[str, Any]:
    """Recall@10 of the service's dense leg (HNSW, iterative scan) against exact search in scope.

    The service is asked for the dense leg only (`lexical: 0, graph: 0`) with `explain`, and its top
    10 by `dense_rank` are compared: the final order also weighs importance, which is not the index's
    job. `recall@10` counts the exact ten ids found; `within_tie` counts the hits no farther than the
    exact tenth plus `TIE_EPSILON` (the target is judged on the strict one).
    """
    service = config.recall_service(db, embedder)
    depth = min(config.recall.leg_depth, 100)
    strict: list[float] = []
    within_tie: list[float] = []
    per_query: list[dict[str, Any]] = []
    for text in queries:
        vector = await embedder.embed_query(text)
        request = RecallRequest(
            query=text, namespace=scope.namespace, limit=depth, weights=MODE_WEIGHTS[DENSE], explain=True
        )
        response = await service.recall(user_id, request)
        approximate = {  # public id → distance
            hit.id: hit.explain.dense_distance
            for hit in response.results
            if hit.explain is not None and hit.explain.dense_rank is not None and hit.explain.dense_rank <= 10
        }
        async with db.read.acquire() as conn, conn.transaction(readonly=True):
            await conn.execute("SET LOCAL enable_indexscan = off")
            rows = await conn.fetch(
                _EXACT_SQL, list(scope.namespace_ids), HalfVector(vector), 10, embedder.model_id
            )
        exact = [(r["public_id"], r["distance"]) for r in rows]  # the ids recall answers
        found, close = score_query(approximate, exact)
        strict.append(found)
        within_tie.append(close)
        per_query.append({"query": text, "recall@10": found, "within_tie": close})
    worst = sorted(per_query, key=lambda q: (q["recall@10"], q["within_tie"]))[:WORST_KEPT]
    return {
        **_summary(strict),
        "within_tie": _summary(within_tie),
        "worst": [q for q in worst if q["recall@10"] < 1.0],
    }


def score_query(
    approximate: Mapping[int, float | None], exact: Sequence[tuple[int, float]]
) -> tuple[float, float]:
    """(strict, within tie) recall of one query: the share of the `exact` (id, distance) ten that
    `approximate` (id → distance) found, and the share of its hits no farther than the exact tenth
    plus `TIE_EPSILON`."""
    wanted = max(len(exact), 1)
    found = len(approximate.keys() & {memory_id for memory_id, _ in exact}) / wanted
    farthest = exact[-1][1] + TIE_EPSILON if exact else 0.0
    close = sum(1 for distance in approximate.values() if distance is not None and distance <= farthest)
    return found, min(close, len(exact)) / wanted


def _summary(scores: Sequence[float]) -> dict[str, Any]:
    """Mean, 95% interval, minimum and how many queries fell short of 1."""
    values = np.asarray(scores)
    # per-query recall varies a lot (most queries find all ten, a few miss some): a hundred queries
    # leave the mean's interval about as wide as the gap to the target, so it is reported with it
    mean = float(values.mean())
    half_width = 1.96 * float(values.std(ddof=1)) / np.sqrt(values.size) if values.size > 1 else 0.0
    return {
        "queries": float(values.size),
        "recall@10": round(mean, 4),
        "ci95": [round(mean - half_width, 4), round(mean + half_width, 4)],
        "min": round(float(values.min()), 2),
        "below_1": float((values < 1.0).sum()),
    }
