"""Merging one of a user's namespaces into another: every memory of `source` moves to `into`, then
`source` is gone. What `memoria namespaces migrate-project` does when a repository's new namespace
exists already next to its old one (an agent captured into the new name before the move).

Moving keeps each memory's id, content, links (a namespace's links join its own memories, and all of
them move) and sealed secrets. Three things cannot simply move:
- a live memory of `source` whose content `into` holds live already: it is forgotten (soft-deleted,
  as `DELETE /v1/memories/{id}` does, so what it superseded holds again) and moves as a forgotten
  memory; `into` keeps its own copy;
- a capture key (an exchange's idempotency key) `into` holds already: the moved copy drops it;
- the concept graph: the moved memories leave `source`'s concepts and are indexed anew in `into`
  (jobs, as after a store).
The users `source` was shared with keep a share of `into` (unless they had one; theirs stays).

Unlike a rename (app/namespaces/rename.py) a merge is not undone by renaming back, so the route
answers what a merge would do without doing it unless asked (`apply`).
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from app.errors import InvalidInput, NotFound
from app.graph import indexing_jobs, lock_graph, unlink_memories
from app.links import source_deleted
from app.memories.writing import WritePath
from app.namespaces.service import is_own_name

# One namespace creator per user at a time, the lock app/namespaces/sql.py takes to create: a
# store cannot recreate `source` while it is being merged away.
LOCK_USER_NAMESPACES = """
SELECT pg_advisory_xact_lock(hashtext('memoria.namespaces'), mod($1::bigint, 2147483648)::integer)
"""

OWN_NAMESPACE_IDS = "SELECT name, id FROM namespaces WHERE user_id = $1 AND name = ANY($2::text[])"

# What a merge of $1 into $2 moves: every memory, the live ones, and the live ones $2 holds already.
MERGE_PLAN = """
SELECT count(*) AS memories,
       count(*) FILTER (WHERE m.deleted_at IS NULL) AS live,
       count(*) FILTER (
           WHERE m.deleted_at IS NULL AND EXISTS (
               SELECT 1 FROM memories t
               WHERE t.namespace_id = $2 AND t.content_hash = m.content_hash AND t.deleted_at IS NULL
           )
       ) AS duplicates,
       (SELECT count(*) FROM namespace_shares s WHERE s.namespace_id = $1) AS shares
FROM memories m
WHERE m.namespace_id = $1
"""

LOCK_SOURCE_MEMORIES = "SELECT id FROM memories WHERE namespace_id = $1 ORDER BY id FOR UPDATE"

LIVE_DUPLICATES = """
SELECT m.id FROM memories m
WHERE m.namespace_id = $1 AND m.deleted_at IS NULL AND EXISTS (
    SELECT 1 FROM memories t
    WHERE t.namespace_id = $2 AND t.content_hash = m.content_hash AND t.deleted_at IS NULL
)
"""

FORGET = "UPDATE memories SET deleted_at = now(), updated_at = now() WHERE id = ANY($1::bigint[])"

DROP_CLASHING_CAPTURE_KEYS = """
UPDATE memories m SET capture_key = NULL
WHERE m.namespace_id = $1 AND m.capture_key IS NOT NULL AND EXISTS (
    SELECT 1 FROM memories t WHERE t.namespace_id = $2 AND t.capture_key = m.capture_key
)
"""

MOVE_MEMORIES = """
UPDATE memories SET namespace_id = $2 WHERE namespace_id = $1
RETURNING id, deleted_at IS NULL AND NOT is_sensitive AS indexable
"""

CARRY_SHARES = """
INSERT INTO namespace_shares (namespace_id, grantee_id, permission)
SELECT $2, grantee_id, permission FROM namespace_shares WHERE namespace_id = $1
ON CONFLICT (namespace_id, grantee_id) DO NOTHING
"""

DROP_NAMESPACE = "DELETE FROM namespaces WHERE id = $1"


@dataclass(frozen=True, slots=True)
class Merged:
    namespace: str
    """Where the memories are (or would be)."""
    merged: str
    """The namespace merged away."""
    memories: int
    """Memories moved, forgotten ones included."""
    duplicates: int
    """Live memories whose content `namespace` held already: moved as forgotten."""
    shares: int
    """Shares of the merged namespace (carried to `namespace` unless the user had one there)."""
    applied: bool


async def merge_namespaces(writes: WritePath, user_id: int, source: str, into: str, *, apply: bool) -> Merged:
    """Merge the user's namespace `source` into their `into` when `apply`, else say what it would do:
    404 when either is not theirs, 422 for a shared (`@owner/...`) or invalid name, or the same twice."""
    for name in (source, into):
        if not is_own_name(name):
            raise InvalidInput(f"invalid namespace {name[:80]!r}: name one of your own (not @owner/...)")
    if source == into:
        raise InvalidInput(f"namespace {source!r} cannot be merged into itself")
    async with writes.db.write.acquire() as conn, conn.transaction():
        await conn.execute(LOCK_USER_NAMESPACES, user_id)
        ids = {r["name"]: r["id"] for r in await conn.fetch(OWN_NAMESPACE_IDS, user_id, [source, into])}
        for name in (source, into):
            if name not in ids:
                raise NotFound(f"namespace {name!r} not found")
        from_id, to_id = ids[source], ids[into]
        await lock_graph(conn, {from_id, to_id})  # before the memory rows: the graph writers' lock order
        plan = await conn.fetchrow(MERGE_PLAN, from_id, to_id)
        assert plan is not None  # an aggregate always answers one row
        merged = Merged(into, source, plan["memories"], plan["duplicates"], plan["shares"], apply)
        if apply:
            await _move(conn, writes, from_id, to_id)
    if apply:
        writes.jobs.wake()
    return merged


async def _move(conn: asyncpg.Connection, writes: WritePath, from_id: int, to_id: int) -> None:
    """The merge itself, inside the caller's transaction holding both graph locks."""
    memory_ids = [r["id"] for r in await conn.fetch(LOCK_SOURCE_MEMORIES, from_id)]
    await unlink_memories(conn, memory_ids)
    duplicates = [r["id"] for r in await conn.fetch(LIVE_DUPLICATES, from_id, to_id)]
    for memory_id in duplicates:
        await source_deleted(conn, memory_id)  # what it superseded holds again
    await conn.execute(FORGET, duplicates)
    await conn.execute(DROP_CLASHING_CAPTURE_KEYS, from_id, to_id)
    moved = await conn.fetch(MOVE_MEMORIES, from_id, to_id)
    await conn.execute(CARRY_SHARES, from_id, to_id)
    await conn.execute(DROP_NAMESPACE, from_id)
    if writes.index_graph:
        await writes.jobs.add(conn, indexing_jobs([r["id"] for r in moved if r["indexable"]]))
