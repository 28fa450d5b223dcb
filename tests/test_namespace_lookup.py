"""One lookup turns a user's namespace names into ids, for recall, listing and the graph routes."""

from __future__ import annotations

import asyncpg
import pytest

from app.auth.service import create_user
from app.errors import InvalidInput, NotFound
from app.namespaces import ensure_namespaces, resolve_namespaces


async def test_no_names_means_every_namespace_the_user_owns_and_nobody_elses(
    conn: asyncpg.Connection,
) -> None:
    alice, bob = await create_user(conn, "alice"), await create_user(conn, "bob")
    mine = await ensure_namespaces(conn, alice, ["b", "a", "c"], max_per_user=10)
    await ensure_namespaces(conn, bob, ["a", "d"], max_per_user=10)
    assert await resolve_namespaces(conn, alice, None) == sorted(mine.values())
    assert await resolve_namespaces(conn, await create_user(conn, "newcomer"), None) == []


async def test_named_namespaces_come_back_in_the_order_named(conn: asyncpg.Connection) -> None:
    alice = await create_user(conn, "alice")
    ids = await ensure_namespaces(conn, alice, ["a", "b", "c"], max_per_user=10)
    assert await resolve_namespaces(conn, alice, ["c", "a"]) == [ids["c"], ids["a"]]


async def test_an_unknown_or_someone_elses_namespace_is_404_naming_it(conn: asyncpg.Connection) -> None:
    alice, bob = await create_user(conn, "alice"), await create_user(conn, "bob")
    await ensure_namespaces(conn, alice, ["a"], max_per_user=10)
    await ensure_namespaces(conn, bob, ["bobs"], max_per_user=10)
    with pytest.raises(NotFound, match="'bobs'"):
        await resolve_namespaces(conn, alice, ["a", "bobs"])
    with pytest.raises(NotFound, match="'nope'"):
        await resolve_namespaces(conn, alice, ["nope"])


async def test_a_malformed_name_is_invalid_input(conn: asyncpg.Connection) -> None:
    with pytest.raises(InvalidInput):
        await resolve_namespaces(conn, await create_user(conn, "alice"), ["bad name"])
