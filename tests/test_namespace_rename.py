"""`POST /v1/namespaces/rename`: a namespace gets another name and keeps everything it holds (memory
ids, recall, shares, whose grantees follow the new name); a taken name is 409 and changes nothing;
renaming back undoes it; nobody renames what is not theirs."""

from __future__ import annotations

from typing import Any

import asyncpg
from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.test_shares import Headers, share, store, user_key

Client = AsyncTestClient[Litestar]

OLD, NEW = "repo:shop", "repo:github.com/acme/shop"
PLAN = "The shop deploys with Terraform from the infra repository"


async def rename(client: Client, headers: Headers, namespace: str, new_name: str) -> Any:
    body = {"namespace": namespace, "new_name": new_name}
    return await client.post("/v1/namespaces/rename", json=body, headers=headers)


async def names(client: Client, headers: Headers) -> dict[str, int]:
    response = await client.get("/v1/namespaces", headers=headers)
    assert response.status_code == 200, response.text
    return {ns["name"]: ns["memories"] for ns in response.json()}


async def test_a_renamed_namespace_keeps_its_memories_ids_and_recall_and_renaming_back_undoes_it(
    client: Client, conn: asyncpg.Connection
) -> None:
    alice = await user_key(conn, "alice")
    stored = await store(client, alice, PLAN, OLD)
    await store(client, alice, "Use pnpm, not npm", OLD)
    response = await rename(client, alice, OLD, NEW)
    assert response.status_code == 200, response.text
    assert response.json() == {"namespace": NEW, "previous": OLD, "memories": 2, "shares": 0}
    assert await names(client, alice) == {NEW: 2}
    memory = (await client.get(f"/v1/memories/{stored['id']}", headers=alice)).json()
    assert memory["namespace"] == NEW
    recalled = await client.post(
        "/v1/recall", json={"query": "how does the shop deploy", "namespaces": [NEW]}, headers=alice
    )
    assert recalled.status_code == 200, recalled.text
    assert stored["id"] in [hit["id"] for hit in recalled.json()["results"]]
    gone = await client.post("/v1/recall", json={"query": "deploy", "namespaces": [OLD]}, headers=alice)
    assert gone.status_code == 404
    back = await rename(client, alice, NEW, OLD)
    assert back.status_code == 200, back.text
    assert await names(client, alice) == {OLD: 2}


async def test_a_taken_name_is_409_and_nothing_changes(client: Client, conn: asyncpg.Connection) -> None:
    alice = await user_key(conn, "alice")
    await store(client, alice, PLAN, OLD)
    await store(client, alice, "Captured since the upgrade", NEW)
    response = await rename(client, alice, OLD, NEW)
    assert response.status_code == 409, response.text
    assert response.json()["namespace"] == NEW
    assert "never merges" in response.json()["detail"]
    assert await names(client, alice) == {OLD: 1, NEW: 1}


async def test_grantees_follow_the_new_name(client: Client, conn: asyncpg.Connection) -> None:
    alice, bob = await user_key(conn, "alice"), await user_key(conn, "bob")
    await store(client, alice, PLAN, OLD)
    assert (await share(client, alice, OLD, "bob")).status_code == 201
    response = await rename(client, alice, OLD, NEW)
    assert response.json()["shares"] == 1
    listed = await client.get("/v1/memories", params={"namespace": f"@alice/{NEW}"}, headers=bob)
    assert listed.status_code == 200, listed.text
    assert [m["content"] for m in listed.json()["items"]] == [PLAN]
    old = await client.get("/v1/memories", params={"namespace": f"@alice/{OLD}"}, headers=bob)
    assert old.status_code == 404


async def test_nobody_renames_what_is_not_theirs(client: Client, conn: asyncpg.Connection) -> None:
    alice, bob = await user_key(conn, "alice"), await user_key(conn, "bob")
    await store(client, alice, PLAN, OLD)
    assert (await share(client, alice, OLD, "bob", "write")).status_code == 201
    assert (await rename(client, bob, OLD, "repo:mine")).status_code == 404
    assert (await rename(client, bob, f"@alice/{OLD}", "repo:mine")).status_code == 422
    assert (await rename(client, alice, OLD, f"@bob/{OLD}")).status_code == 422
    assert (await rename(client, alice, OLD, OLD)).status_code == 422
    assert (await rename(client, alice, "repo:none", NEW)).status_code == 404
    assert await names(client, alice) == {OLD: 1}


async def test_a_new_name_holding_a_credential_is_422_naming_its_kind_and_nothing_changes(
    client: Client, conn: asyncpg.Connection
) -> None:
    alice = await user_key(conn, "alice")
    await store(client, alice, PLAN, OLD)
    token = "ghp_" + "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
    response = await rename(client, alice, OLD, f"repo:{token}")
    assert response.status_code == 422, response.text
    assert "credential" in response.json()["detail"] and token not in response.text
    assert await names(client, alice) == {OLD: 1}
