"""The namespaces recall is timed in: the big one (half the corpus) and the smallest one."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from app.bench.corpus import namespace_names


@dataclass(frozen=True, slots=True)
class Scope:
    label: str
    namespace: str
    namespace_id: int
    rows: int


async def live_counts(pool: asyncpg.Pool, user_id: int) -> dict[str, int]:
    """Live memories per namespace of the bench user."""
    rows = await pool.fetch(
        """
        SELECT n.name, count(m.id) AS n
        FROM namespaces n LEFT JOIN memories m ON m.namespace_id = n.id AND m.deleted_at IS NULL
        WHERE n.user_id = $1 GROUP BY n.name ORDER BY n.name
        """,
        user_id,
    )
    return {r["name"]: int(r["n"]) for r in rows}


async def resolve_scopes(pool: asyncpg.Pool, user_id: int, namespaces: int) -> list[Scope]:
    """The big scope, and the smallest of the others when there are others."""
    counts = await live_counts(pool, user_id)
    names = namespace_names(namespaces)
    ids = {
        r["name"]: r["id"]
        for r in await pool.fetch("SELECT name, id FROM namespaces WHERE user_id = $1", user_id)
    }
    smallest = min(names[1:], key=lambda n: counts.get(n, 0)) if len(names) > 1 else None
    scopes = [Scope("big", names[0], ids[names[0]], counts[names[0]])]
    if smallest is not None:
        scopes.append(Scope("small", smallest, ids[smallest], counts[smallest]))
    return scopes
