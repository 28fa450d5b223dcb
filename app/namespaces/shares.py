"""Sharing a namespace with another user: grant (or change) read or write, revoke, list.

Only a namespace's owner manages its shares; a share is never passed on by its grantee. A grantee
reads a shared namespace only by naming its address `@owner/name` (recall and list without a
namespace cover the caller's own namespaces), and writes into it only with a `write` share.

User names are not secret here (an operator creates them), so sharing with a user that does not
exist says so: hiding it would cost an answer that lies about what happened, since a successful
share with an existing user reveals that user anyway.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import asyncpg

from app.errors import InvalidInput, NotFound
from app.namespaces import sql
from app.namespaces.service import is_own_name

Permission = Literal["read", "write"]


@dataclass(frozen=True, slots=True)
class Grant:
    namespace: str
    user: str
    permission: Permission
    created_at: datetime
    created: bool
    """False when the share existed and only its permission was set."""


def _own_name(namespace: str) -> str:
    if not is_own_name(namespace):
        raise InvalidInput(
            f"invalid namespace {namespace[:80]!r}: name one of your own namespaces (as you call it, "
            "without @owner/)"
        )
    return namespace


async def grant(
    conn: asyncpg.Connection, owner_id: int, owner: str, namespace: str, user: str, permission: Permission
) -> Grant:
    """Share the owner's `namespace` with `user`; an existing share gets `permission`."""
    _own_name(namespace)
    if user == owner:
        raise InvalidInput("a namespace cannot be shared with its owner")
    if "/" in owner:
        # its address @owner/name would split at the wrong slash
        raise InvalidInput(f"user {owner!r} has a '/' in its name, so its namespaces cannot be shared")
    async with conn.transaction():
        namespace_id = await conn.fetchval(sql.OWN_NAMESPACE_ID, owner_id, namespace)
        if namespace_id is None:
            raise NotFound(f"namespace {namespace!r} not found")
        grantee_id = await conn.fetchval(sql.USER_ID, user)
        if grantee_id is None:
            raise NotFound(f"user {user!r} not found")
        row = await conn.fetchrow(sql.GRANT, namespace_id, grantee_id, permission)
    return Grant(namespace, user, permission, row["created_at"], row["inserted"])


async def revoke(conn: asyncpg.Connection | asyncpg.Pool, owner_id: int, namespace: str, user: str) -> None:
    """End the share; the grantee's next request no longer reaches the namespace. 404 if none."""
    _own_name(namespace)
    if await conn.fetchval(sql.REVOKE, owner_id, namespace, user) is None:
        raise NotFound(f"namespace {namespace!r} is not shared with {user!r}")


async def shares_granted(conn: asyncpg.Connection | asyncpg.Pool, owner_id: int) -> list[asyncpg.Record]:
    """(namespace, grantee, permission, created_at) of every share of the owner's namespaces."""
    return list(await conn.fetch(sql.SHARES_GRANTED, owner_id))


async def shares_received(conn: asyncpg.Connection | asyncpg.Pool, user_id: int) -> list[asyncpg.Record]:
    """(namespace address, owner, permission, created_at) of every share given to the user."""
    return list(await conn.fetch(sql.SHARES_RECEIVED, user_id))
