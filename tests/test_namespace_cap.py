"""The cap on a user's own namespaces (`MEMORIA_NAMESPACES__MAX_PER_USER`).

Writes create namespaces on first use, so one key could otherwise create them without end. On the
real database and app: a store or capture that would pass the cap is refused whole with 409 naming
the cap and stores nothing; writing into namespaces that exist, or shared with the user, goes on at
the cap; and writers racing for the last namespace never pass it together.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.auth.service import get_or_create_user
from app.embeddings import LocalEmbedder
from app.factory import create_app
from app.namespaces import TooManyNamespaces, ensure_namespaces
from app.namespaces.settings import NamespaceSettings
from app.settings import Settings
from tests.test_shares import share, user_key

Client = AsyncTestClient[Litestar]
Headers = dict[str, str]
RACE_TIMEOUT_S = 20.0
"""Every concurrent test ends within this, or fails: a lock that never frees must not hang CI."""


@asynccontextmanager
async def capped(settings: Settings, embedder: LocalEmbedder, cap: int) -> AsyncIterator[Client]:
    changed = settings.model_copy(update={"namespaces": NamespaceSettings(max_per_user=cap)})
    async with AsyncTestClient(app=create_app(changed, embedder=embedder)) as client:
        yield client


async def store(client: Client, headers: Headers, *namespaces: str) -> tuple[int, Any]:
    items = [
        {"content": f"The deploy of {ns} runs from its own pipeline.", "namespace": ns} for ns in namespaces
    ]
    response = await client.post("/v1/memories", json=items, headers=headers)
    return response.status_code, response.json()


async def own_namespaces(conn: asyncpg.Connection, user: str) -> list[str]:
    rows = await conn.fetch(
        "SELECT n.name FROM namespaces n JOIN users u ON u.id = n.user_id WHERE u.name = $1 ORDER BY n.name",
        user,
    )
    return [r["name"] for r in rows]


async def stored_contents(conn: asyncpg.Connection) -> int:
    count: int = await conn.fetchval("SELECT count(*) FROM memories")
    return count


async def test_a_store_that_would_pass_the_cap_is_refused_whole_with_409_naming_the_cap(
    settings: Settings, embedder: LocalEmbedder, alice: Headers, conn: asyncpg.Connection
) -> None:
    async with capped(settings, embedder, cap=3) as client:
        assert (await store(client, alice, "a", "b"))[0] == 201
        before = await stored_contents(conn)
        status, problem = await store(client, alice, "a", "c", "d")  # c would be the 3rd, d the 4th
        assert status == 409
        assert problem["max_namespaces"] == 3
        assert "at most 3 namespaces" in problem["detail"] and "nothing of this request" in problem["detail"]
        # nothing of the batch is stored, not even the item for the existing namespace
        assert await stored_contents(conn) == before
        assert await own_namespaces(conn, "alice") == ["a", "b"]
        # up to the cap goes on, and so does writing into what exists at the cap
        assert (await store(client, alice, "c"))[0] == 201
        assert (await store(client, alice, "a", "b", "c"))[0] == 201
        assert (await store(client, alice, "e"))[0] == 409
        assert await own_namespaces(conn, "alice") == ["a", "b", "c"]


async def test_namespaces_shared_with_a_user_do_not_count_and_stay_writable_at_the_cap(
    settings: Settings, embedder: LocalEmbedder, conn: asyncpg.Connection
) -> None:
    owner, grantee = await user_key(conn, "alice"), await user_key(conn, "bob")
    async with capped(settings, embedder, cap=1) as client:
        assert (await store(client, owner, "shop"))[0] == 201
        assert (await share(client, owner, "shop", "bob", "write")).status_code == 201
        assert (await store(client, grantee, "mine"))[0] == 201  # bob's one own namespace
        assert (await store(client, grantee, "@alice/shop", "mine"))[0] == 201
        assert (await store(client, grantee, "other"))[0] == 409
        # one user's cap is theirs alone: alice's namespace counts for her, not for bob
        assert await own_namespaces(conn, "bob") == ["mine"]


async def test_a_capture_into_a_new_namespace_past_the_cap_is_refused_with_409(
    settings: Settings, embedder: LocalEmbedder, alice: Headers, conn: asyncpg.Connection
) -> None:
    exchange = {"session_id": "s-1", "turn": 0, "prompt": "How do we deploy?", "reply": "With Terraform."}
    async with capped(settings, embedder, cap=1) as client:
        assert (await store(client, alice, "repo:shop"))[0] == 201
        response = await client.post(
            "/v1/capture/claude-code",
            json={"exchanges": [exchange]},
            params={"namespace": "repo:docs"},
            headers=alice,
        )
        assert response.status_code == 409, response.text
        assert response.json()["max_namespaces"] == 1
        assert await own_namespaces(conn, "alice") == ["repo:shop"]


async def test_a_writer_waits_for_one_creating_the_last_namespace_then_is_refused(db_url: str) -> None:
    """The cap's last namespace and the one past it, created at once on two connections: the second
    waits on the user's namespace lock until the first commits, then counts its namespace."""
    first, second = await asyncpg.connect(db_url), await asyncpg.connect(db_url)
    try:
        user_id = await get_or_create_user(first, "alice")
        await ensure_namespaces(first, user_id, ["a"], max_per_user=2)
        async with asyncio.timeout(RACE_TIMEOUT_S):
            tx = first.transaction()
            await tx.start()
            await ensure_namespaces(first, user_id, ["b"], max_per_user=2)  # the 2nd, not committed yet
            racing = asyncio.create_task(ensure_namespaces(second, user_id, ["c"], max_per_user=2))
            while not await first.fetchval(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            ):
                assert not racing.done(), "the second writer did not wait for the first"
                await asyncio.sleep(0.02)
            await tx.commit()
            with pytest.raises(TooManyNamespaces, match="at most 2 namespaces"):
                await racing
        names = await first.fetch("SELECT name FROM namespaces WHERE user_id = $1 ORDER BY name", user_id)
        assert [r["name"] for r in names] == ["a", "b"]
    finally:
        await first.close()
        await second.close()


async def test_many_concurrent_stores_each_creating_a_namespace_never_pass_the_cap(
    settings: Settings, embedder: LocalEmbedder, alice: Headers, conn: asyncpg.Connection
) -> None:
    async with capped(settings, embedder, cap=4) as client:
        async with asyncio.timeout(RACE_TIMEOUT_S):
            statuses = await asyncio.gather(*(store(client, alice, f"ns-{i}") for i in range(10)))
    assert sorted(status for status, _ in statuses) == [201] * 4 + [409] * 6
    created = {answer["results"][0]["namespace"] for status, answer in statuses if status == 201}
    assert set(await own_namespaces(conn, "alice")) == created and len(created) == 4
