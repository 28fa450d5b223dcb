"""`POST /v1/namespaces/merge`: a plan unless `apply`; applied, every memory of the merged namespace
moves with its id and links, a live copy of what the target holds is forgotten, a capture key the
target holds is dropped, the graph is indexed anew in the target, shares follow, the namespace is
gone; nobody merges what is not theirs."""

from __future__ import annotations

from typing import Any

import asyncpg
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.embeddings import LocalEmbedder
from app.settings import Settings
from tests.test_capture_route import capture, drain, exchange, running
from tests.test_shares import Headers, share, store, user_key

Client = AsyncTestClient[Litestar]

OLD, NEW = "repo:shop", "repo:github.com/acme/shop"
PLAN = "The shop deploys with Terraform from the infra repository"
PNPM = "Use pnpm, not npm, for the Kubernetes dashboard frontend"
RELEASE = "Releases are tagged vX.Y.Z by the release workflow"


async def merge(client: Client, headers: Headers, namespace: str, into: str, apply: bool = False) -> Any:
    body = {"namespace": namespace, "into": into, "apply": apply}
    return await client.post("/v1/namespaces/merge", json=body, headers=headers)


async def names(client: Client, headers: Headers) -> dict[str, int]:
    response = await client.get("/v1/namespaces", headers=headers)
    assert response.status_code == 200, response.text
    return {ns["name"]: ns["memories"] for ns in response.json()}


async def concepts(client: Client, headers: Headers, namespace: str) -> set[str]:
    response = await client.get(f"/v1/graph/concepts?namespace={namespace}&limit=200", headers=headers)
    assert response.status_code == 200, response.text
    return {c["name"] for c in response.json()}


async def test_a_plan_changes_nothing_and_a_merge_moves_everything_once(
    settings: Settings, embedder: LocalEmbedder, conn: asyncpg.Connection
) -> None:
    async with running(settings, embedder) as client:
        alice = await user_key(conn, "alice")
        kept = await store(client, alice, PLAN, OLD)
        pnpm = await store(client, alice, PNPM, OLD)
        release = await store(client, alice, RELEASE, OLD)
        copy = await store(client, alice, PLAN, NEW)  # stored again under the new name
        linked = await client.post(
            f"/v1/memories/{pnpm['id']}/links",
            json={"kind": "see-also", "target": release["id"]},
            headers=alice,
        )
        assert linked.status_code == 201, linked.text
        await drain(client)
        assert "pnpm" in await concepts(client, alice, OLD)

        plan = await merge(client, alice, OLD, NEW)
        assert plan.status_code == 200, plan.text
        assert plan.json() == {
            "namespace": NEW,
            "merged": OLD,
            "memories": 3,
            "duplicates": 1,
            "shares": 0,
            "applied": False,
        }
        assert await names(client, alice) == {OLD: 3, NEW: 1}

        done = await merge(client, alice, OLD, NEW, apply=True)
        assert done.status_code == 200, done.text
        assert done.json()["applied"] is True
        assert await names(client, alice) == {NEW: 3}  # the copy of PLAN forgotten, the others moved
        moved = (await client.get(f"/v1/memories/{pnpm['id']}", headers=alice)).json()
        assert moved["namespace"] == NEW and moved["content"] == PNPM
        forgotten = await client.get(f"/v1/memories/{kept['id']}?include_deleted=true", headers=alice)
        assert forgotten.json()["namespace"] == NEW and forgotten.json()["deleted_at"] is not None
        assert (await client.get(f"/v1/memories/{copy['id']}", headers=alice)).json()["deleted_at"] is None
        links = (await client.get(f"/v1/memories/{pnpm['id']}/links", headers=alice)).json()
        assert [x["memory"]["id"] for x in links["links"]] == [release["id"]]
        await drain(client)
        assert "pnpm" in await concepts(client, alice, NEW)
        recalled = await client.post(
            "/v1/recall", json={"query": "pnpm or npm for the dashboard", "namespaces": [NEW]}, headers=alice
        )
        assert pnpm["id"] in [hit["id"] for hit in recalled.json()["results"]]
        assert (await merge(client, alice, OLD, NEW, apply=True)).status_code == 404  # gone


async def test_the_same_exchange_captured_under_both_names_merges(
    settings: Settings, embedder: LocalEmbedder, conn: asyncpg.Connection
) -> None:
    async with running(settings, embedder) as client:
        alice = await user_key(conn, "alice")
        await capture(client, alice, [exchange(0), exchange(1)], namespace=OLD)
        await capture(client, alice, [exchange(1), exchange(2)], namespace=NEW)  # turn 1 again
        done = await merge(client, alice, OLD, NEW, apply=True)
        assert done.status_code == 200, done.text
        assert (done.json()["memories"], done.json()["duplicates"]) == (2, 1)
        assert await names(client, alice) == {NEW: 3}
        again = await capture(client, alice, [exchange(0), exchange(1)], namespace=NEW)
        assert again["stored"] == 0  # each exchange once, under the new name


async def test_grantees_of_the_merged_namespace_reach_the_target(
    client: Client, conn: asyncpg.Connection
) -> None:
    alice, bob = await user_key(conn, "alice"), await user_key(conn, "bob")
    await store(client, alice, PLAN, OLD)
    await store(client, alice, PNPM, NEW)
    assert (await share(client, alice, OLD, "bob")).status_code == 201
    done = await merge(client, alice, OLD, NEW, apply=True)
    assert done.json()["shares"] == 1
    listed = await client.get("/v1/memories", params={"namespace": f"@alice/{NEW}"}, headers=bob)
    assert listed.status_code == 200, listed.text
    assert sorted(m["content"] for m in listed.json()["items"]) == sorted([PLAN, PNPM])


async def test_nobody_merges_what_is_not_theirs(client: Client, conn: asyncpg.Connection) -> None:
    alice, bob = await user_key(conn, "alice"), await user_key(conn, "bob")
    await store(client, alice, PLAN, OLD)
    await store(client, bob, PNPM, "bobs")
    assert (await share(client, alice, OLD, "bob", "write")).status_code == 201
    assert (await merge(client, bob, OLD, "bobs", apply=True)).status_code == 404
    assert (await merge(client, bob, "bobs", OLD, apply=True)).status_code == 404
    assert (await merge(client, bob, "bobs", f"@alice/{OLD}", apply=True)).status_code == 422
    assert (await merge(client, alice, OLD, OLD, apply=True)).status_code == 422
    assert await names(client, alice) == {OLD: 1}
    assert await names(client, bob) == {"bobs": 1}
