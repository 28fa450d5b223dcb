"""Namespace lookup and creation, always scoped to one user.

Writes create a namespace on first use (agents derive names from repositories); reads of a name
the user does not own answer 404, the same as a name that does not exist at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import asyncpg

from app.errors import InvalidInput, NotFound

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$")


def validate_namespace_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise InvalidInput(
            f"invalid namespace {name[:80]!r}: 1-200 characters, letters, digits and ._:/@+- "
            "(starting with a letter or digit)"
        )
    return name


_USER_NAMESPACES = """
SELECT name, id FROM namespaces
WHERE user_id = $1 AND ($2::text[] IS NULL OR name = ANY($2::text[]))
ORDER BY id
"""


async def ensure_namespaces(conn: asyncpg.Connection, user_id: int, names: Iterable[str]) -> dict[str, int]:
    """Return {name: id}, creating the namespaces that do not exist yet."""
    wanted = sorted({validate_namespace_name(n) for n in names})
    await conn.execute(
        "INSERT INTO namespaces (user_id, name) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING",
        user_id,
        wanted,
    )
    rows = await conn.fetch(_USER_NAMESPACES, user_id, wanted)
    return {r["name"]: r["id"] for r in rows}


async def resolve_namespaces(
    conn: asyncpg.Connection | asyncpg.Pool, user_id: int, names: Sequence[str] | None
) -> list[int]:
    """Ids of the user's namespaces called `names`, in that order, or of every namespace the user
    owns (in id order) when `names` is None; 404 naming the first unknown one."""
    wanted = None if names is None else [validate_namespace_name(name) for name in names]
    rows = await conn.fetch(_USER_NAMESPACES, user_id, wanted)
    found = {r["name"]: r["id"] for r in rows}
    if wanted is None:
        return list(found.values())
    for name in wanted:
        if name not in found:
            raise NotFound(f"namespace {name!r} not found")
    return [found[name] for name in wanted]


async def list_namespaces(conn: asyncpg.Connection | asyncpg.Pool, user_id: int) -> list[asyncpg.Record]:
    return list(
        await conn.fetch(
            """
            SELECT n.name, n.created_at,
                   count(m.id) FILTER (WHERE m.deleted_at IS NULL) AS memories
            FROM namespaces n LEFT JOIN memories m ON m.namespace_id = n.id
            WHERE n.user_id = $1
            GROUP BY n.id ORDER BY n.name
            """,
            user_id,
        )
    )
