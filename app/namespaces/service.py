"""Namespace lookup and creation, always on behalf of one user.

A user's own namespaces are called by their names; a namespace another user shared with them by
its address `@owner/name` (an own name starts with a letter or digit, so the two never clash).
Writes create an own namespace on first use (agents derive names from repositories), never a
namespace in another user's account. Reads of a name the user cannot read answer 404, the same as
a name that does not exist at all; a write into a namespace shared read-only answers 403. Every
lookup asks the database, so a revoked share stops working at the next request.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import asyncpg

from app.errors import ApiError, Conflict, InvalidInput, NotFound
from app.namespaces import sql

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$")
# `@owner/name`: the owner up to the first slash (user names with a slash cannot share, see
# app/namespaces/shares.py), then an own name.
_ADDRESS = re.compile(r"^@([^/\x00-\x1f\x7f]{1,128})/(.+)$", re.DOTALL)


class ReadOnlyShare(ApiError):
    """A write into a namespace the caller may only read. 403 rather than 404: the caller can read
    the namespace, so the answer tells them nothing new, and a 404 would read as "not there"."""

    status_code = 403


def validate_namespace_name(name: str) -> str:
    """`name` when it is an own namespace name or a shared namespace's address; 422 otherwise."""
    if is_own_name(name) or shared_address(name) is not None:
        return name
    raise InvalidInput(
        f"invalid namespace {name[:80]!r}: 1-200 characters, letters, digits and ._:/@+- "
        "(starting with a letter or digit), or @owner/name for a namespace shared with you"
    )


def is_own_name(name: str) -> bool:
    """Whether `name` is a valid name for a namespace of one's own (not an `@owner/name` address)."""
    return _NAME.fullmatch(name) is not None


def address_of(owner: str, namespace: str) -> str:
    """What a grantee calls `owner`'s shared `namespace` (app/namespaces/sql.py spells it in SQL)."""
    return f"@{owner}/{namespace}"


def shared_address(name: str) -> tuple[str, str] | None:
    """(owner, namespace) of an address `@owner/namespace`, or None when `name` is not one."""
    match = _ADDRESS.fullmatch(name)
    if match is None or not is_own_name(match[2]):
        return None
    return match[1], match[2]


@dataclass(frozen=True, slots=True)
class Namespace:
    id: int
    name: str
    """As the caller calls it: its name when theirs, `@owner/name` when shared with them."""


async def resolve_scope(
    conn: asyncpg.Connection | asyncpg.Pool,
    user_id: int,
    names: Sequence[str] | None,
    *,
    write: bool = False,
) -> list[Namespace]:
    """The namespaces called `names`, in that order; every namespace the user owns (in id order)
    when `names` is None. Shared namespaces are in scope only when named. 404 naming the first
    name the user cannot read; with `write`, 403 naming the first one shared with them read-only.

    The common case (own names only) is one indexed query; a shared address adds one more."""
    if names is None:
        return [Namespace(r["id"], r["name"]) for r in await conn.fetch(sql.OWN_NAMESPACES, user_id, None)]
    wanted = [validate_namespace_name(name) for name in names]
    addresses = {name: parts for name in wanted if (parts := shared_address(name)) is not None}
    own = [name for name in wanted if name not in addresses]
    found = {r["name"]: r["id"] for r in await conn.fetch(sql.OWN_NAMESPACES, user_id, own)} if own else {}
    read_only: set[str] = set()
    if addresses:
        owners, shared = zip(*addresses.values(), strict=True)
        for row in await conn.fetch(sql.SHARED_NAMESPACES, user_id, list(owners), list(shared)):
            address = address_of(row["owner"], row["name"])
            found[address] = row["id"]
            if row["permission"] != "write":
                read_only.add(address)
    for name in wanted:
        if name not in found:
            raise NotFound(f"namespace {name!r} not found")
        if write and name in read_only:
            raise ReadOnlyShare(f"namespace {name!r} is shared with you read-only")
    return [Namespace(found[name], name) for name in wanted]


async def resolve_namespaces(
    conn: asyncpg.Connection | asyncpg.Pool,
    user_id: int,
    names: Sequence[str] | None,
    *,
    write: bool = False,
) -> list[int]:
    """The ids of `resolve_scope`."""
    return [namespace.id for namespace in await resolve_scope(conn, user_id, names, write=write)]


class TooManyNamespaces(Conflict):
    """A write that would create namespaces past the user's cap (`NamespaceSettings.max_per_user`).
    409: the request is sound, the account's state refuses it; `max_namespaces` names the cap."""


async def ensure_namespaces(
    conn: asyncpg.Connection, user_id: int, names: Iterable[str], *, max_per_user: int
) -> dict[str, int]:
    """{name: id} of namespaces to write into: own ones, created when they do not exist yet, and
    shared ones, which must exist and be shared with the user for writing (404 / 403).

    Creating takes the user's namespace lock and refuses (409, `TooManyNamespaces`) when the user
    would then hold more than `max_per_user` namespaces of their own, creating none of them: the
    caller's batch is refused whole, before anything of it is written. Writing into namespaces that
    exist takes no lock."""
    wanted = sorted({validate_namespace_name(n) for n in names})
    shared = [name for name in wanted if shared_address(name) is not None]
    own = [name for name in wanted if name not in shared]
    ids = {ns.name: ns.id for ns in await resolve_scope(conn, user_id, shared, write=True)} if shared else {}
    if not own:
        return ids
    found = {r["name"]: r["id"] for r in await conn.fetch(sql.OWN_NAMESPACES, user_id, own)}
    if len(found) < len(own):
        # a savepoint when the caller's transaction is open: the lock lasts until it commits
        async with conn.transaction():
            await conn.execute(sql.LOCK_USER_NAMESPACES, user_id)
            after = await conn.fetchval(sql.NAMESPACES_AFTER, user_id, own)
            if after > max_per_user:
                new = [name for name in own if name not in found]
                raise TooManyNamespaces(
                    f"a user holds at most {max_per_user} namespaces of their own; creating "
                    f"{new[0]!r}{f' and {len(new) - 1} more' if len(new) > 1 else ''} would make "
                    f"{after}: write into a namespace you have (nothing of this request was stored)",
                    max_namespaces=max_per_user,
                )
            await conn.execute(sql.CREATE_NAMESPACES, user_id, own)
            found = {r["name"]: r["id"] for r in await conn.fetch(sql.OWN_NAMESPACES, user_id, own)}
    return ids | found


def writable_namespace(row: asyncpg.Record | None, what: str) -> int:
    """The namespace id of a (namespace_id, writable) row the caller looked up to change `what`:
    404 when they cannot see it at all, 403 when they see it through a read-only share."""
    if row is None:
        raise NotFound(f"{what} not found")
    if not row["writable"]:
        raise ReadOnlyShare(f"{what} is in a namespace shared with you read-only")
    namespace_id: int = row["namespace_id"]
    return namespace_id


async def list_namespaces(conn: asyncpg.Connection | asyncpg.Pool, user_id: int) -> list[asyncpg.Record]:
    """The user's own namespaces with their live memory counts (shares: app/namespaces/shares.py)."""
    return list(await conn.fetch(sql.LIST_NAMESPACES, user_id))


async def namespace_names(conn: asyncpg.Connection | asyncpg.Pool, user_id: int) -> list[str]:
    """The names of the user's own namespaces, sorted, for the web UI's pickers: unlike
    `namespace_overview` it counts nothing, so a picker costs the same whatever the table's size."""
    return sorted(namespace.name for namespace in await resolve_scope(conn, user_id, None))


async def namespace_overview(conn: asyncpg.Connection | asyncpg.Pool, user_id: int) -> list[asyncpg.Record]:
    """The user's own namespaces with live memory and episode counts, concepts, and when the newest
    live item was added (`sql.NAMESPACE_OVERVIEW`)."""
    return list(await conn.fetch(sql.NAMESPACE_OVERVIEW, user_id))
