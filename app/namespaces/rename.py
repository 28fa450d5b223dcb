"""Renaming one of your namespaces: how a project's folder-name namespace (`repo:shop`) becomes its
project identity's (`repo:github.com/acme/shop`, see `memoria namespaces migrate-project`).

A rename moves nothing: the namespace keeps its id, so its memories (with their ids), links, concept
graph and shares stay as they are, in one statement, and renaming back undoes it. It never merges:
when the new name is taken, the answer is 409 and nothing changes; merging two namespaces settles
duplicate memories and two concept graphs, which is the memory domain's work (app/memories/merge.py).
A namespace shared with others is renamed for them too (their address `@owner/name` follows the new
name).
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from app.errors import Conflict, InvalidInput, NotFound
from app.namespaces import sql
from app.namespaces.service import is_own_name


class NamespaceTaken(Conflict):
    """The new name is already one of the user's namespaces; `namespace` names it."""


@dataclass(frozen=True, slots=True)
class Renamed:
    namespace: str
    previous: str
    memories: int
    """Its live memories, which now answer to `namespace`."""
    shares: int
    """How many users reach it through a share (their address changed with the name)."""


async def rename_namespace(conn: asyncpg.Connection, user_id: int, name: str, new_name: str) -> Renamed:
    """Rename the user's namespace `name` to `new_name`: 404 when it is not theirs, 409 when
    `new_name` is taken, 422 for an invalid or shared (`@owner/...`) name or no change at all."""
    for value in (name, new_name):
        if not is_own_name(value):
            raise InvalidInput(
                f"invalid namespace {value[:80]!r}: 1-200 characters, letters, digits and ._:/@+- "
                "(starting with a letter or digit), one of your own (a shared one is renamed by its owner)"
            )
    if name == new_name:
        raise InvalidInput(f"namespace {name!r} already has this name")
    async with conn.transaction():
        # the creators' lock: a write creating `new_name` now waits for the rename, or went first
        await conn.execute(sql.LOCK_USER_NAMESPACES, user_id)
        if await conn.fetchval(sql.OWN_NAMESPACE_ID, user_id, name) is None:
            raise NotFound(f"namespace {name!r} not found")
        if await conn.fetchval(sql.OWN_NAMESPACE_ID, user_id, new_name) is not None:
            raise NamespaceTaken(
                f"namespace {new_name!r} exists already: a rename never merges two namespaces "
                "(POST /v1/namespaces/merge does)",
                namespace=new_name,
            )
        row = await conn.fetchrow(sql.RENAME_NAMESPACE, user_id, name, new_name)
    return Renamed(new_name, name, row["memories"], row["shares"])
