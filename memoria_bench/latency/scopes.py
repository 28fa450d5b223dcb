"""The namespaces recall is timed in: the big one (half the corpus), the smallest one and, when
asked, a middle one (the biggest of the rest, a share of the corpus below the big one's), which
reads its text matches namespace by namespace where the big one reads them table-wide
(`MEMORIA_RECALL__TEXT_BY_NAMESPACE_BELOW_SHARE`); and, when asked, the caller's whole scope, every
namespace of theirs at once (a recall naming none), which costs what the caller's namespace count
makes it cost."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from memoria_bench.corpus import namespace_names


@dataclass(frozen=True, slots=True)
class Scope:
    label: str
    namespace: str | None  # None: every namespace of the caller's (the request names none)
    namespace_ids: tuple[int, ...]
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


async def resolve_scopes(
    pool: asyncpg.Pool, user_id: int, namespaces: int, mid: bool = False, whole: bool = False
) -> list[Scope]:
    """The big scope, the middle one when `mid` and there are two others or more, the smallest of
    the others when there are others, and every namespace of the user's when `whole`; in that order.
    A namespace the corpus drew no memory for was never created (the Zipf tail of many namespaces)."""
    counts = await live_counts(pool, user_id)
    ids = {
        r["name"]: r["id"]
        for r in await pool.fetch("SELECT name, id FROM namespaces WHERE user_id = $1", user_id)
    }
    names = [name for name in namespace_names(namespaces) if name in ids]
    others = sorted(names[1:], key=lambda n: (counts.get(n, 0), n))

    def one(label: str, name: str) -> Scope:
        return Scope(label, name, (ids[name],), counts[name])

    scopes = [one("big", names[0])]
    if mid and len(others) > 1:
        scopes.append(one("mid", others[-1]))
    if others:
        scopes.append(one("small", others[0]))
    if whole:
        scopes.append(Scope("whole", None, tuple(sorted(ids.values())), sum(counts.values())))
    return scopes
