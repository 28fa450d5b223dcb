"""EXPLAIN ANALYZE of the recall statement: which part of it costs what, typically and at the tail.

One EXPLAIN can be an outlier on a busy machine; medians over a sample show which CTE costs what in
a typical request, the slowest plan shows what the tail looks like.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import asyncpg
import numpy as np
from pgvector.asyncpg import register_vector

from app.db.plans import plan_summary
from app.recall.service import set_local_sql
from app.recall.settings import RecallSettings
from app.recall.sql import RECALL_STATEMENT


async def explain_profile(
    url: str,
    recall: RecallSettings,
    sampled: Sequence[Sequence[Any]],
    slowest: Sequence[Any],
    ef_search: int,
) -> dict[str, Any]:
    """Median time per part over the `sampled` statements' arguments, and the full plan text of the
    `slowest`, each run with the SET LOCAL settings the service sends (`ef_search` the candidate
    list it uses on this table)."""
    set_local = set_local_sql(recall, ef_search=ef_search)
    conn = await asyncpg.connect(url)
    try:
        await register_vector(conn)
        summaries = [plan_summary(await _explain_json(conn, set_local, args)) for args in sampled]
        worst = plan_summary(await _explain_json(conn, set_local, slowest))
        async with conn.transaction(readonly=True):
            await conn.execute(set_local)
            text = await conn.fetch(f"EXPLAIN (ANALYZE, BUFFERS) {RECALL_STATEMENT}", *slowest)
    finally:
        await conn.close()
    parts: dict[str, list[float]] = {}
    indexes: dict[str, set[str]] = {}
    for summary in summaries:
        for name, part in summary["parts"].items():
            parts.setdefault(name, []).append(part["ms"])
            indexes.setdefault(name, set()).update(part["indexes"])
    return {
        "statements": len(summaries),
        "execution_ms_p50": _median([s["execution_ms"] for s in summaries]),
        "parts_ms_p50": {name: _median(values) for name, values in parts.items()},
        "indexes": {name: sorted(found) for name, found in indexes.items()},
        "slowest": {**worst, "text": "\n".join(r[0] for r in text)},
    }


async def _explain_json(conn: asyncpg.Connection, set_local: str, args: Sequence[Any]) -> dict[str, Any]:
    async with conn.transaction(readonly=True):
        await conn.execute(set_local)
        raw = await conn.fetchval(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {RECALL_STATEMENT}", *args)
    plan: dict[str, Any] = (json.loads(raw) if isinstance(raw, str) else raw)[0]
    return plan


def _median(values: Sequence[float]) -> float:
    return round(float(np.median(values)), 2) if len(values) else 0.0
