"""The namespaces recall is timed in: the big one (half the corpus), the smallest one and, when
asked, a middle one (the biggest of the rest, a share of the corpus below the big one's), which
reads its text matches namespace by namespace where the big one reads them table-wide
(`MEMORIA_RECALL__TEXT_BY_NAMESPACE_BELOW_SHARE`)."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from memoria_bench.corpus import namespace_names


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


async def resolve_scopes(pool: asyncpg.Pool, user_id: int, namespaces: int, mid: bool = False) -> list[Scope]:
    """The big scope, the middle one when `mid` and there are two others or more, and the smallest
    of the others when there are others; in that order."""
    counts = await live_counts(pool, user_id)
    names = namespace_names(namespaces)
    ids = {
        r["name"]: r["id"]
        for r in await pool.fetch("SELECT name, id FROM namespaces WHERE user_id = $1", user_id)
    }
    others = sorted(names[1:], key=lambda n: (counts.get(n, 0), n))
    scopes = [Scope("big", names[0], ids[names[0]], counts[names[0]])]
    if mid and len(others) > 1:
        scopes.append(Scope("mid", others[-1], ids[others[-1]], counts[others[-1]]))
    if others:
        scopes.append(Scope("small", others[0], ids[others[0]], counts[others[0]]))
    return scopes
