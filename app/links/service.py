"""Typed links between memories, and what a supersede does to the older memory's validity.

A link joins two memories of ONE namespace: a link is a statement about the namespace's memories,
and a supersede that hid a memory from readers of another namespace (or another tenant) would let
one writer change what others recall. A memory the caller cannot see is "not found", whichever
end it is, so a probe with another tenant's id learns nothing.

`supersedes`, `resolved-by` and `part-of` have a direction, and none of them may close a cycle (a
memory that ends up superseding itself would hide every version). A supersede ends the older
memory's validity (`valid_to`) when the newer one starts, keeping what it was on the link: undoing
the link, or deleting the newer memory, gives it back; restoring the newer one from the trash ends
it again. Link writes of one namespace take one advisory lock, so that a cycle check and the
insert after it see every link made before them.

Functions taking a connection run in the caller's transaction (the store path links a new memory
in the transaction that inserts it); `LinkService` is the routes' face.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg

from app.db import Database
from app.errors import Conflict, InvalidInput, NotFound
from app.links import queries as q
from app.links.schemas import ExportedLink, Link, LinkedMemory, LinkList
from app.namespaces.service import ReadOnlyShare, resolve_namespaces

log = logging.getLogger(__name__)

MAX_CHAIN = 64
"""Longest chain of one kind a cycle check walks (a chain of versions is a handful)."""
MAX_REASON_CHARS = 1000


@dataclass(frozen=True, slots=True)
class MadeLink:
    """A link as made: internal ids (for the caller's follow-up in its transaction) and public ones."""

    source_id: int
    target_id: int
    source_public_id: int
    target_public_id: int
    kind: str
    created: bool
    """False when the same link existed already (making it again changes nothing)."""


def _end(rows: Sequence[asyncpg.Record], public_id: int) -> asyncpg.Record:
    for row in rows:
        if row["public_id"] == public_id:
            return row
    raise NotFound(f"memory {public_id} not found")


async def link(
    conn: asyncpg.Connection,
    user_id: int,
    source: int,
    kind: str,
    target: int,
    *,
    origin: str = "user",
    reason: str | None = None,
) -> MadeLink:
    """Make `source <kind> target` (public ids), in the caller's transaction. 404 for an end the
    caller cannot see, 403 through a read-only share, 422 for a link to itself or across
    namespaces, 409 for a cycle or a memory superseded already."""
    if source == target:
        raise InvalidInput("a memory cannot be linked to itself")
    if reason is not None and len(reason) > MAX_REASON_CHARS:
        reason = reason[: MAX_REASON_CHARS - 1] + "…"
    ends = await q.LockEnds(user_id=user_id, public_ids=[source, target]).fetch(conn)
    src, dst = _end(ends, source), _end(ends, target)
    for end in (src, dst):
        if not end["live"]:
            raise NotFound(f"memory {end['public_id']} not found (it is in the trash)")
        if not end["writable"]:
            raise ReadOnlyShare(f"memory {end['public_id']} is in a namespace shared with you read-only")
    if src["namespace_id"] != dst["namespace_id"]:
        raise InvalidInput(
            f"memories {source} and {target} are in different namespaces "
            f"({src['namespace']}, {dst['namespace']}): links join memories of one namespace"
        )
    await q.LockNamespaceLinks(namespace_id=src["namespace_id"]).fetchval(conn)
    if kind != "see-also" and await q.Reaches(
        from_id=dst["id"], kind=kind, max_depth=MAX_CHAIN, to_id=src["id"]
    ).fetchval(conn):
        raise Conflict(f"{source} {kind} {target} would close a cycle: {target} already leads to {source}")
    if kind == "supersedes":
        holder = await q.SupersededBy(memory_id=dst["id"]).fetchval(conn)
        if holder is not None and holder != source:
            raise Conflict(
                f"memory {target} is superseded by {holder} already: undo that link first",
                existing_id=holder,
            )
    made = await q.InsertLink(
        source_id=src["id"], target_id=dst["id"], kind=kind, origin=origin, reason=reason
    ).fetchrow(conn)
    if made is not None and kind == "supersedes":
        await q.EndSuperseded(source_id=src["id"], target_id=dst["id"]).execute(conn)
    return MadeLink(src["id"], dst["id"], source, target, kind, made is not None)


async def unlink(conn: asyncpg.Connection, user_id: int, source: int, kind: str, target: int) -> None:
    """Undo `source <kind> target` (public ids); a superseded memory holds again as it did before.
    404 when no such link is among the caller's memories."""
    ends = await q.LockEnds(user_id=user_id, public_ids=[source, target]).fetch(conn)
    src, dst = _end(ends, source), _end(ends, target)
    if not src["writable"]:
        raise ReadOnlyShare(f"memory {source} is in a namespace shared with you read-only")
    await q.LockNamespaceLinks(namespace_id=src["namespace_id"]).fetchval(conn)
    if kind == "supersedes":
        await q.ReopenSuperseded(source_id=src["id"], target_id=dst["id"]).execute(conn)
    if await q.DeleteLink(source_id=src["id"], kind=kind, target_id=dst["id"]).fetchval(conn) is None:
        raise NotFound(f"no link {source} {kind} {target}")


async def source_deleted(conn: asyncpg.Connection, memory_id: int) -> None:
    """A memory goes to the trash (or is purged): what it superseded holds again (internal id)."""
    await q.ReopenSuperseded(source_id=memory_id, target_id=None).execute(conn)


async def source_restored(conn: asyncpg.Connection, memory_id: int) -> None:
    """A memory is back from the trash: what it superseded stops holding again (internal id)."""
    await q.EndSuperseded(source_id=memory_id, target_id=None).execute(conn)


def _linked(row: asyncpg.Record) -> LinkedMemory:
    return LinkedMemory(
        id=row["public_id"],
        namespace=row["namespace"],
        content=row["content"],
        kind=row["memory_kind"],
        valid_from=row["valid_from"],
        valid_to=row["valid_to"],
    )


class LinkService:
    """The links API: make, undo and list a memory's links (each in its own transaction)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(self, user_id: int, source: int, kind: str, target: int) -> LinkList:
        async with self.db.write.acquire() as conn, conn.transaction():
            await link(conn, user_id, source, kind, target)
        return await self.of(user_id, source)

    async def remove(self, user_id: int, source: int, kind: str, target: int) -> None:
        async with self.db.write.acquire() as conn, conn.transaction():
            await unlink(conn, user_id, source, kind, target)

    async def of(self, user_id: int, memory_id: int, executor: asyncpg.Pool | None = None) -> LinkList:
        """Every link of one memory (public id) the caller may see, both ways; 404 otherwise."""
        pool = executor if executor is not None else self.db.read
        async with pool.acquire() as conn:
            internal_id = await q.SeenMemory(user_id=user_id, public_id=memory_id).fetchval(conn)
            if internal_id is None:
                raise NotFound(f"memory {memory_id} not found")
            rows = await q.LinksOf(user_id=user_id, memory_id=internal_id).fetch(conn)
        links = [
            Link(
                kind=r["kind"],
                direction=r["direction"],
                memory=_linked(r),
                origin=r["origin"],
                reason=r["reason"],
                created_at=r["linked_at"],
            )
            for r in rows
        ]
        superseded_by = next(
            (link.memory.id for link in links if link.kind == "supersedes" and link.direction == "in"), None
        )
        return LinkList(memory_id=memory_id, superseded_by=superseded_by, links=links)

    async def among(
        self, user_id: int, namespaces: Sequence[str] | None, include_sensitive: bool = False
    ) -> list[ExportedLink]:
        """The links among the memories an export of `namespaces` writes (all of the caller's own
        when None; shared ones when named), by public ids, oldest first. Read from the pool the
        memories of an export are listed from, so the two agree."""
        async with self.db.write.acquire() as conn:
            namespace_ids = await resolve_namespaces(conn, user_id, namespaces)
            rows = await q.NamespaceLinks(
                namespace_ids=namespace_ids, user_id=user_id, include_sensitive=include_sensitive
            ).fetch(conn)
        return [
            ExportedLink(
                source=r["source"], kind=r["kind"], target=r["target"], origin=r["origin"], reason=r["reason"]
            )
            for r in rows
        ]
