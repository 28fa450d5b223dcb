"""Sharing a namespace: its owner lets another user read it, or read and write it.

A grantee reaches a shared namespace only by naming its address `@owner/name`; recall and list
without a namespace never include it. A read share never writes (403, nothing changes); a write
share stores, changes and deletes but never creates a namespace in the owner's account; a revoked
share stops working at the next request.
"""

from __future__ import annotations

from typing import Any

import asyncpg
import httpx
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.auth.scopes import ADMIN, SCOPE_OPT
from app.auth.service import create_key, get_or_create_user
from app.errors import NotFound
from app.namespaces import ReadOnlyShare, resolve_namespaces, resolve_scope, shared_address
from app.namespaces.service import ensure_namespaces

Client = AsyncTestClient[Litestar]
Headers = dict[str, str]

PLAN = "The shop deploys with Terraform from the infra repository"


async def user_key(conn: asyncpg.Connection, user: str) -> Headers:
    """Headers with a key that may read, write and manage shares (the admin scope)."""
    await get_or_create_user(conn, user)
    created = await create_key(conn, user)
    await conn.execute("UPDATE api_keys SET scopes = '{read,write,admin}' WHERE id = $1", created.id)
    return {"Authorization": f"Bearer {created.key}"}


@pytest.fixture
async def owner(conn: asyncpg.Connection) -> Headers:
    return await user_key(conn, "alice")


@pytest.fixture
async def grantee(conn: asyncpg.Connection) -> Headers:
    return await user_key(conn, "bob")


async def store(client: Client, headers: Headers, content: str, namespace: str) -> Any:
    response = await client.post(
        "/v1/memories", json={"content": content, "namespace": namespace}, headers=headers
    )
    assert response.status_code == 201, response.text
    return response.json()


async def share(client: Client, headers: Headers, namespace: str, user: str, permission: str = "read") -> Any:
    body = {"namespace": namespace, "user": user, "permission": permission}
    return await client.post("/v1/shares", json=body, headers=headers)


async def recall(client: Client, headers: Headers, **scope: Any) -> Any:
    return await client.post(
        "/v1/recall", json={"query": "how does the shop deploy?", **scope}, headers=headers
    )


async def memory_count(conn: asyncpg.Connection) -> Any:
    return await conn.fetchrow(
        "SELECT count(*) AS rows, count(*) FILTER (WHERE deleted_at IS NULL) AS live,"
        " string_agg(content || importance, '|' ORDER BY id) AS state FROM memories"
    )


async def test_a_read_share_is_read_only_when_named_and_shows_its_address(
    client: Client, owner: Headers, grantee: Headers
) -> None:
    alices = await store(client, owner, PLAN, "shop")
    bobs = await store(client, grantee, "The shop deploys by hand on Fridays", "shop")  # his own "shop"
    assert (await share(client, owner, "shop", "bob")).status_code == 201

    # without naming it: bob's own namespaces only, in recall and in lists
    unnamed = (await recall(client, grantee)).json()["results"]
    assert [hit["id"] for hit in unnamed] == [bobs["id"]]
    listed = (await client.get("/v1/memories", headers=grantee)).json()["items"]
    assert [item["id"] for item in listed] == [bobs["id"]]
    assert [ns["name"] for ns in (await client.get("/v1/namespaces", headers=grantee)).json()] == ["shop"]

    # named: alice's memories, shown under the address bob calls them by
    named = (await recall(client, grantee, namespace="@alice/shop")).json()["results"]
    assert [(hit["id"], hit["namespace"]) for hit in named] == [(alices["id"], "@alice/shop")]
    both = (await recall(client, grantee, namespaces=["shop", "@alice/shop"], limit=5)).json()["results"]
    assert sorted((hit["id"], hit["namespace"]) for hit in both) == sorted(
        [(alices["id"], "@alice/shop"), (bobs["id"], "shop")]
    )
    page = (await client.get("/v1/memories?namespace=@alice/shop", headers=grantee)).json()["items"]
    assert [(item["id"], item["namespace"]) for item in page] == [(alices["id"], "@alice/shop")]
    read = await client.get(f"/v1/memories/{alices['id']}", headers=grantee)
    assert read.status_code == 200 and read.json()["namespace"] == "@alice/shop"
    assert read.json()["content"] == PLAN

    # the owner still calls it by its name
    assert (await client.get(f"/v1/memories/{alices['id']}", headers=owner)).json()["namespace"] == "shop"
    assert [hit["namespace"] for hit in (await recall(client, owner)).json()["results"]] == ["shop"]


async def test_a_read_share_never_writes_and_changes_nothing(
    client: Client, conn: asyncpg.Connection, owner: Headers, grantee: Headers
) -> None:
    alices = await store(client, owner, PLAN, "shop")
    await share(client, owner, "shop", "bob", "read")
    before = await memory_count(conn)
    url = f"/v1/memories/{alices['id']}"

    attempts = [
        await client.post(
            "/v1/memories", json={"content": "bob was here", "namespace": "@alice/shop"}, headers=grantee
        ),
        await client.post(
            "/v1/memories",
            json=[
                {"content": "mine", "namespace": "bobs"},
                {"content": "bob was here", "namespace": "@alice/shop"},
            ],
            headers=grantee,
        ),
        await client.patch(url, json={"content": "hijacked"}, headers=grantee),
        await client.patch(url, json={"importance": 1}, headers=grantee),
        await client.post(f"{url}/promote", json={}, headers=grantee),
        await client.post(f"{url}/restore", headers=grantee),
        await client.delete(url, headers=grantee),
        await client.delete(f"{url}?purge=true", headers=grantee),
    ]
    for response in attempts:
        assert response.status_code == 403, response.text
        assert "read-only" in response.json()["detail"]
    assert await memory_count(conn) == before
    # the refused batch created none of bob's namespaces either
    assert (await client.get("/v1/namespaces", headers=grantee)).json() == []


async def test_what_the_owner_deleted_stays_out_of_reach_of_every_grantee(
    client: Client, owner: Headers, grantee: Headers
) -> None:
    """Soft-deleted memories are the owner's to restore or purge: a share never shows them."""
    kept = await store(client, owner, PLAN, "shop")
    dropped = await store(client, owner, "The old cluster's admin password rotates monthly", "shop")
    assert (await client.delete(f"/v1/memories/{dropped['id']}", headers=owner)).status_code == 204
    assert (await share(client, owner, "shop", "bob", "write")).status_code == 201

    one = await client.get(f"/v1/memories/{dropped['id']}?include_deleted=true", headers=grantee)
    assert one.status_code == 404, one.text
    listed = await client.get(
        "/v1/memories", params={"namespace": "@alice/shop", "include_deleted": "true"}, headers=grantee
    )
    assert [m["id"] for m in listed.json()["items"]] == [kept["id"]]
    mine = await client.get("/v1/memories/" + str(dropped["id"]) + "?include_deleted=true", headers=owner)
    assert mine.status_code == 200, "the owner still sees it"


def _masked(answer: httpx.Response, memory_id: int) -> tuple[int, str, str]:
    """Status, content type and body with the probed id replaced by X."""
    return answer.status_code, answer.headers["content-type"], answer.text.replace(str(memory_id), "X")


async def test_a_write_share_can_neither_restore_nor_purge_what_the_owner_deleted(
    client: Client, owner: Headers, grantee: Headers, conn: asyncpg.Connection
) -> None:
    """The owner's trash is out of a grantee's reach for changes too: restore and purge answer exactly
    as for an id nobody has, and the memory stays in the owner's trash."""
    dropped = await store(client, owner, "The old cluster's admin password rotates monthly", "shop")
    assert (await client.delete(f"/v1/memories/{dropped['id']}", headers=owner)).status_code == 204
    assert (await share(client, owner, "shop", "bob", "write")).status_code == 201
    before = await memory_count(conn)
    missing = 2**52 + 4242  # public ids are drawn below 2**53

    for method, path in [
        ("POST", "/v1/memories/{}/restore"),
        ("DELETE", "/v1/memories/{}?purge=true"),
        ("DELETE", "/v1/memories/{}"),
        ("PATCH", "/v1/memories/{}"),
    ]:
        body = {"importance": 0.9} if method == "PATCH" else None
        probe = await client.request(method, path.format(dropped["id"]), json=body, headers=grantee)
        control = await client.request(method, path.format(missing), json=body, headers=grantee)
        assert probe.status_code == 404, (method, path, probe.text)
        assert _masked(probe, dropped["id"]) == _masked(control, missing), (method, path)
    assert await memory_count(conn) == before
    restored = await client.post(f"/v1/memories/{dropped['id']}/restore", headers=owner)
    assert restored.status_code == 200 and restored.json()["deleted_at"] is None, "the owner still may"


async def test_the_owners_sensitive_memories_are_theirs_alone_whatever_the_share_or_the_flag(
    client: Client, owner: Headers, grantee: Headers
) -> None:
    """`include_sensitive` opens the caller's own sensitive memories, never an owner's to a grantee:
    no read path shows one, no change reaches one, and its id answers as an id nobody has."""
    kept = await store(client, owner, PLAN, "shop")
    pin = await client.post(
        "/v1/memories",
        json={"content": "The shop's deploy pager pin is 4417", "namespace": "shop", "is_sensitive": True},
        headers=owner,
    )
    assert pin.status_code == 201, pin.text
    secret_id = pin.json()["id"]
    linked = await client.post(
        f"/v1/memories/{kept['id']}/links", json={"kind": "see-also", "target": secret_id}, headers=owner
    )
    assert linked.status_code == 201, linked.text
    assert (await share(client, owner, "shop", "bob", "write")).status_code == 201
    missing = 2**52 + 4242

    for method, path, body in [
        ("GET", "/v1/memories/{}", None),
        ("GET", "/v1/memories/{}?include_deleted=true", None),
        ("GET", "/v1/memories/{}/links", None),
        ("PATCH", "/v1/memories/{}", {"importance": 0.9}),
        ("POST", "/v1/memories/{}/promote", {}),
        ("DELETE", "/v1/memories/{}", None),
        ("DELETE", "/v1/memories/{}?purge=true", None),
    ]:
        probe = await client.request(method, path.format(secret_id), json=body, headers=grantee)
        control = await client.request(method, path.format(missing), json=body, headers=grantee)
        assert probe.status_code == 404, (method, path, probe.text)
        assert _masked(probe, secret_id) == _masked(control, missing), (method, path)

    listed = await client.get(
        "/v1/memories", params={"namespace": "@alice/shop", "include_sensitive": "true"}, headers=grantee
    )
    assert [m["id"] for m in listed.json()["items"]] == [kept["id"]]
    found = await client.post(
        "/v1/recall",
        json={
            "query": "shop deploy pager pin",
            "namespace": "@alice/shop",
            "filters": {"include_sensitive": True},
        },
        headers=grantee,
    )
    assert found.status_code == 200, found.text
    assert secret_id not in [hit["id"] for hit in found.json()["results"]]
    assert "4417" not in found.text
    links = await client.get(f"/v1/memories/{kept['id']}/links", headers=grantee)
    assert links.json()["links"] == [], "the link's other end is the owner's sensitive memory"
    exported = await client.get(
        "/v1/links", params={"namespace": "@alice/shop", "include_sensitive": "true"}, headers=grantee
    )
    assert exported.status_code == 200 and exported.json() == [], exported.text

    # the owner's own view is unchanged
    mine = await client.post(
        "/v1/recall",
        json={"query": "shop deploy pager pin", "filters": {"include_sensitive": True}},
        headers=owner,
    )
    assert secret_id in [hit["id"] for hit in mine.json()["results"]]
    assert (await client.get(f"/v1/memories/{secret_id}", headers=owner)).status_code == 200


async def test_a_write_share_stores_changes_and_deletes_in_the_owners_namespace(
    client: Client, owner: Headers, grantee: Headers
) -> None:
    alices = await store(client, owner, PLAN, "shop")
    assert (await share(client, owner, "shop", "bob", "write")).status_code == 201

    stored = await store(client, grantee, "Rollbacks go through the previous Terraform plan", "@alice/shop")
    assert stored["namespace"] == "@alice/shop"
    seen_by_owner = (await client.get(f"/v1/memories/{stored['id']}", headers=owner)).json()
    assert seen_by_owner["namespace"] == "shop"

    changed = await client.patch(f"/v1/memories/{alices['id']}", json={"importance": 0.75}, headers=grantee)
    assert changed.status_code == 200, changed.text
    assert changed.json()["namespace"] == "@alice/shop" and changed.json()["importance"] == 0.75
    assert (await client.delete(f"/v1/memories/{stored['id']}", headers=grantee)).status_code == 204
    gone = await client.get(f"/v1/memories/{stored['id']}?include_deleted=true", headers=owner)
    assert gone.json()["deleted_at"] is not None

    # a write share reaches that namespace only: none is ever created in alice's account
    elsewhere = await client.post(
        "/v1/memories", json={"content": "new place", "namespace": "@alice/other"}, headers=grantee
    )
    assert elsewhere.status_code == 404, elsewhere.text
    assert [ns["name"] for ns in (await client.get("/v1/namespaces", headers=owner)).json()] == ["shop"]


async def test_a_revoked_share_is_refused_at_the_next_request(
    client: Client, owner: Headers, grantee: Headers
) -> None:
    alices = await store(client, owner, PLAN, "shop")
    await share(client, owner, "shop", "bob", "write")
    assert (await recall(client, grantee, namespace="@alice/shop")).status_code == 200

    assert (await client.delete("/v1/shares?namespace=shop&user=bob", headers=owner)).status_code == 204

    url = f"/v1/memories/{alices['id']}"
    attempts = [
        await recall(client, grantee, namespace="@alice/shop"),
        await client.get("/v1/memories?namespace=@alice/shop", headers=grantee),
        await client.get(url, headers=grantee),
        await client.patch(url, json={"importance": 1}, headers=grantee),
        await client.delete(url, headers=grantee),
        await client.post(
            "/v1/memories", json={"content": "late", "namespace": "@alice/shop"}, headers=grantee
        ),
    ]
    for response in attempts:
        assert response.status_code == 404, response.text
    assert (await client.get("/v1/shares", headers=grantee)).json()["received"] == []
    assert (await client.delete("/v1/shares?namespace=shop&user=bob", headers=owner)).status_code == 404


async def test_sharing_again_changes_the_permission_both_ways(
    client: Client, owner: Headers, grantee: Headers
) -> None:
    await store(client, owner, PLAN, "shop")
    first = await share(client, owner, "shop", "bob", "read")
    upgraded = await share(client, owner, "shop", "bob", "write")
    assert (first.status_code, upgraded.status_code) == (201, 200)
    assert upgraded.json()["permission"] == "write"
    assert upgraded.json()["created_at"] == first.json()["created_at"]
    await store(client, grantee, "bob may write now", "@alice/shop")

    assert (await share(client, owner, "shop", "bob", "read")).status_code == 200
    refused = await client.post(
        "/v1/memories", json={"content": "and now he may not", "namespace": "@alice/shop"}, headers=grantee
    )
    assert refused.status_code == 403


async def test_listing_shows_the_shares_given_and_the_shares_received(
    client: Client, conn: asyncpg.Connection, owner: Headers, grantee: Headers
) -> None:
    carol = await user_key(conn, "carol")
    await store(client, owner, PLAN, "shop")
    await store(client, grantee, "bob's notes", "notes")
    await share(client, owner, "shop", "carol", "write")
    await share(client, owner, "shop", "bob")
    await share(client, grantee, "notes", "alice")

    alices = (await client.get("/v1/shares", headers=owner)).json()
    granted = [(s["namespace"], s["user"], s["permission"], s["address"]) for s in alices["granted"]]
    assert granted == [("shop", "bob", "read", "@alice/shop"), ("shop", "carol", "write", "@alice/shop")]
    assert [(s["namespace"], s["owner"], s["permission"]) for s in alices["received"]] == [
        ("@bob/notes", "bob", "read")
    ]
    carols = (await client.get("/v1/shares", headers=carol)).json()
    assert carols["granted"] == []
    assert [(s["namespace"], s["permission"]) for s in carols["received"]] == [("@alice/shop", "write")]


async def test_bad_share_requests_answer_4xx_naming_the_problem(
    client: Client, conn: asyncpg.Connection, owner: Headers, grantee: Headers
) -> None:
    await store(client, owner, PLAN, "shop")
    await store(client, grantee, "bob's notes", "notes")
    cases: list[tuple[dict[str, Any], int, str]] = [
        ({"namespace": "shop", "user": "alice"}, 422, "its owner"),
        ({"namespace": "shop", "user": "nobody"}, 404, "user 'nobody'"),
        ({"namespace": "nothing", "user": "bob"}, 404, "namespace 'nothing'"),
        ({"namespace": "notes", "user": "bob"}, 404, "namespace 'notes'"),  # bob's, not alice's
        ({"namespace": "@bob/notes", "user": "carol"}, 422, "your own namespaces"),
        ({"namespace": "shop", "user": "bob", "permission": "admin"}, 422, "permission"),
        ({"namespace": "shop", "user": "bob\x00"}, 422, "user"),
        ({"namespace": "shop"}, 422, "user"),
        ({"namespace": "shop", "user": "bob", "extra": 1}, 422, "extra"),
    ]
    for body, status, detail in cases:
        response = await client.post("/v1/shares", json=body, headers=owner)
        assert response.status_code == status, (body, response.text)
        assert detail in response.json()["detail"], (body, response.text)
    revokes = [
        ("/v1/shares?namespace=shop&user=bob", 404),  # never shared
        ("/v1/shares?namespace=notes&user=alice", 404),  # bob's namespace
        ("/v1/shares?namespace=shop", 422),
    ]
    for url, status in revokes:
        response = await client.delete(url, headers=owner)
        assert response.status_code == status, (url, response.text)
    assert (await client.get("/v1/shares", headers=owner)).json() == {"granted": [], "received": []}

    for address in ("@alice", "@/shop", "@alice/", "@alice/ shop"):
        response = await recall(client, grantee, namespace=address)
        assert response.status_code == 422, (address, response.text)


async def test_a_grantee_can_neither_pass_a_share_on_nor_revoke_it(
    client: Client, conn: asyncpg.Connection, owner: Headers, grantee: Headers
) -> None:
    await user_key(conn, "carol")
    await store(client, owner, PLAN, "shop")
    await share(client, owner, "shop", "bob", "write")
    passed_on = [
        await share(client, grantee, "@alice/shop", "carol"),
        await share(client, grantee, "shop", "carol"),
    ]
    assert [response.status_code for response in passed_on] == [422, 404]
    assert (await client.delete("/v1/shares?namespace=shop&user=bob", headers=grantee)).status_code == 404
    assert len((await client.get("/v1/shares", headers=owner)).json()["granted"]) == 1


async def test_an_owner_whose_name_holds_a_slash_cannot_share(
    client: Client, conn: asyncpg.Connection
) -> None:
    slashed = await user_key(conn, "team/ops")
    await user_key(conn, "bob")
    await store(client, slashed, "runbook", "ops")
    response = await share(client, slashed, "ops", "bob")
    assert response.status_code == 422 and "'/'" in response.json()["detail"]


async def test_a_key_without_the_admin_scope_reads_shares_but_cannot_change_them(
    client: Client, conn: asyncpg.Connection, owner: Headers, grantee: Headers
) -> None:
    await store(client, owner, PLAN, "shop")
    await share(client, owner, "shop", "bob")
    created = await create_key(conn, "alice")  # the default scopes: read and write
    plain = {"Authorization": f"Bearer {created.key}"}
    assert (await client.get("/v1/shares", headers=plain)).json()["granted"][0]["user"] == "bob"
    refused = [
        await share(client, plain, "shop", "bob", "write"),
        await client.delete("/v1/shares?namespace=shop&user=bob", headers=plain),
    ]
    assert [response.status_code for response in refused] == [403, 403]
    assert (await client.get("/v1/shares", headers=owner)).json()["granted"][0]["permission"] == "read"


async def test_a_grantee_never_gets_the_originals_of_redacted_secrets(
    uncached_client: Client, conn: asyncpg.Connection, owner: Headers, grantee: Headers
) -> None:
    client = uncached_client  # the scopes change below, in the database: no key trusted from before
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    alices = await store(client, owner, f"CI pushes with the token {token}", "shop")
    await share(client, owner, "shop", "bob", "write")
    await conn.execute("UPDATE api_keys SET scopes = '{read,write,admin,secrets:read}'")
    seen = await client.get(f"/v1/memories/{alices['id']}", headers=grantee)
    assert seen.status_code == 200 and token not in seen.text
    originals = await client.get(f"/v1/memories/{alices['id']}/secrets", headers=grantee)
    assert originals.status_code == 404 and token not in originals.text
    assert (await client.get(f"/v1/memories/{alices['id']}/secrets", headers=owner)).status_code == 200


async def test_changing_shares_needs_the_admin_scope_and_reading_them_does_not(app: Litestar) -> None:
    needs = {
        (method, route.path): handler.opt.get(SCOPE_OPT)
        for route in app.routes
        if route.path == "/v1/shares"
        for handler in getattr(route, "route_handlers", [])
        for method in handler.http_methods
        if method != "OPTIONS"
    }
    assert needs == {
        ("POST", "/v1/shares"): ADMIN,
        ("DELETE", "/v1/shares"): ADMIN,
        ("GET", "/v1/shares"): None,
    }


async def test_the_lookup_resolves_addresses_only_through_a_share(conn: asyncpg.Connection) -> None:
    alice, bob = await get_or_create_user(conn, "alice"), await get_or_create_user(conn, "bob")
    ids = await ensure_namespaces(conn, alice, ["shop", "docs"], max_per_user=10)
    await conn.execute(
        "INSERT INTO namespace_shares (namespace_id, grantee_id, permission) VALUES ($1, $2, 'read')",
        ids["shop"],
        bob,
    )
    scope = await resolve_scope(conn, bob, ["@alice/shop"])
    assert [(ns.id, ns.name) for ns in scope] == [(ids["shop"], "@alice/shop")]
    assert await resolve_namespaces(conn, bob, None) == []  # shared ones only when named
    with pytest.raises(ReadOnlyShare, match="@alice/shop"):
        await resolve_namespaces(conn, bob, ["@alice/shop"], write=True)
    with pytest.raises(ReadOnlyShare):
        await ensure_namespaces(conn, bob, ["@alice/shop"], max_per_user=10)
    for unreachable in ("@alice/docs", "@alice/nothing", "@carol/shop"):
        with pytest.raises(NotFound, match="not found"):
            await resolve_namespaces(conn, bob, [unreachable])
    assert shared_address("@alice/repo:org/app") == ("alice", "repo:org/app")
    assert shared_address("@alice") is None and shared_address("alice/shop") is None


# The recall statement resolves its own scope (`in_scope` in recall.sql): no round trip before it,
# yet what is in scope is what the database holds at that very recall.


def _namespaces(answer: Any) -> set[str]:
    return {hit["namespace"] for hit in answer.json()["results"]}


async def test_a_namespace_stored_into_after_a_recall_is_in_the_next_one_at_once(
    client: Client, owner: Headers
) -> None:
    await store(client, owner, PLAN, "shop")
    assert _namespaces(await recall(client, owner)) == {"shop"}
    await store(client, owner, "The shop deploys from the release branch every Tuesday", "ops")
    assert _namespaces(await recall(client, owner)) == {"shop", "ops"}


async def test_a_share_revoked_between_two_recalls_of_several_namespaces_is_a_404_naming_it(
    client: Client, owner: Headers, grantee: Headers
) -> None:
    await store(client, owner, PLAN, "shop")
    await store(client, grantee, "Bob deploys his shop on Fridays", "mine")
    await share(client, owner, "shop", "bob")
    both = await recall(client, grantee, namespaces=["mine", "@alice/shop"])
    assert both.status_code == 200 and _namespaces(both) == {"mine", "@alice/shop"}
    assert (await client.delete("/v1/shares?namespace=shop&user=bob", headers=owner)).status_code == 204
    refused = await recall(client, grantee, namespaces=["mine", "@alice/shop"])
    assert refused.status_code == 404 and "@alice/shop" in refused.json()["detail"]


async def test_a_named_namespace_that_holds_nothing_is_an_empty_answer_and_an_unknown_one_a_404(
    client: Client, owner: Headers, conn: asyncpg.Connection
) -> None:
    await store(client, owner, PLAN, "shop")
    await conn.execute("UPDATE memories SET deleted_at = now()")
    empty = await recall(client, owner, namespace="shop")
    assert empty.status_code == 200 and empty.json()["results"] == []
    unknown = await recall(client, owner, namespace="nowhere")
    assert unknown.status_code == 404 and "nowhere" in unknown.json()["detail"]
