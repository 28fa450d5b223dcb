"""Cross-tenant probes of typed links, beyond the route walk (tests/test_adversarial.py): what another
tenant's memory id, a read share and a write share can and cannot do with links and supersedes.

A memory the caller cannot see is "not found" whichever end of a link it is, and the answer is the
same, byte for byte once the id is masked, as for an id nobody has: a probe learns nothing. A read
share reads a shared namespace's links but neither links nor supersedes there; a write share links
inside it, and the owner sees that link; a memory superseded in a shared namespace leaves the
grantee's recall as it leaves the owner's.
"""

from __future__ import annotations

from typing import Any

import asyncpg
import httpx
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.test_shares import share, user_key

Client = AsyncTestClient[Litestar]
Headers = dict[str, str]

MISSING = 2**52 + 4242
"""An id no memory has (public ids are drawn at random below 2**53)."""
OLD = "The team's staging cluster runs in eu-west-1 behind the old VPN"
NEW = "The team's staging cluster moved to eu-central-1, reached through the bastion host"


@pytest.fixture
async def alice(conn: asyncpg.Connection) -> Headers:
    return await user_key(conn, "alice")


@pytest.fixture
async def bob(conn: asyncpg.Connection) -> Headers:
    return await user_key(conn, "bob")


async def stored(
    client: Client, headers: Headers, content: str, namespace: str = "default", **more: Any
) -> int:
    answer = await client.post(
        "/v1/memories", json={"content": content, "namespace": namespace, **more}, headers=headers
    )
    assert answer.status_code == 201, answer.text
    return int(answer.json()["id"])


async def state(conn: asyncpg.Connection) -> tuple[Any, ...]:
    """Every memory (content, validity, trash) and every link: what no refused probe may change."""
    memories = await conn.fetch(
        "SELECT id, content, valid_from, valid_to, deleted_at FROM memories ORDER BY id"
    )
    links = await conn.fetch("SELECT source_id, kind, target_id, origin FROM memory_links ORDER BY id")
    return tuple(tuple(r) for r in memories), tuple(tuple(r) for r in links)


def masked(answer: httpx.Response, memory_id: int) -> tuple[int, str, str]:
    """Status, content type and body with the probed id replaced by X."""
    return answer.status_code, answer.headers["content-type"], answer.text.replace(str(memory_id), "X")


async def test_another_tenants_id_answers_exactly_as_an_id_nobody_has_on_every_link_route(
    client: Client, alice: Headers, bob: Headers, conn: asyncpg.Connection
) -> None:
    hers = await stored(client, alice, "Alice's release checklist lives in the wiki")
    hers_too = await stored(client, alice, "Alice's checklist has a rollback step", supersedes=[hers])
    gone = await stored(client, alice, "Alice's retired checklist")
    assert (await client.delete(f"/v1/memories/{gone}", headers=alice)).status_code == 204
    another = await stored(client, alice, "Alice's checklist is reviewed every quarter")
    his = await stored(client, bob, "Bob's release checklist lives in a spreadsheet")
    before = await state(conn)

    def requests(theirs: int) -> list[tuple[str, str, Any]]:
        """Each probe as (method, url, body), with `theirs` where another tenant's id goes."""
        return [
            ("POST", f"/v1/memories/{his}/links", {"kind": "supersedes", "target": theirs}),
            ("POST", f"/v1/memories/{his}/links", {"kind": "see-also", "target": theirs}),
            ("POST", f"/v1/memories/{theirs}/links", {"kind": "see-also", "target": his}),
            ("POST", f"/v1/memories/{theirs}/links", {"kind": "supersedes", "target": another}),
            ("GET", f"/v1/memories/{theirs}/links", None),
            ("DELETE", f"/v1/memories/{theirs}/links/supersedes/{hers}", None),
            ("DELETE", f"/v1/memories/{hers_too}/links/supersedes/{theirs}", None),
            ("DELETE", f"/v1/memories/{his}/links/see-also/{theirs}", None),
            ("POST", "/v1/memories", {"content": "Bob's newer checklist", "supersedes": [theirs]}),
            (
                "POST",
                "/v1/memories",
                [{"content": "Bob's one"}, {"content": "Bob's two", "supersedes": [theirs]}],
            ),
            ("PATCH", f"/v1/memories/{theirs}", {"valid_to": "2026-01-01T00:00:00Z"}),
        ]

    for theirs in (hers, hers_too, gone):
        for (method, url, body), (_, missing_url, missing_body) in zip(
            requests(theirs), requests(MISSING), strict=True
        ):
            if f"{url} {body}".count(str(theirs)) > 1:
                continue  # the same id at both ends: no control names it once
            probe = await client.request(method, url, json=body, headers=bob)
            control = await client.request(method, missing_url, json=missing_body, headers=bob)
            assert probe.status_code == 404, (method, url, probe.text)
            assert masked(probe, theirs) == masked(control, MISSING), (method, url)
    assert await state(conn) == before
    # and her own view of her links is untouched
    mine = (await client.get(f"/v1/memories/{hers}/links", headers=alice)).json()
    assert mine["superseded_by"] == hers_too and len(mine["links"]) == 1


async def test_a_read_share_reads_links_but_never_links_or_supersedes(
    client: Client, alice: Headers, bob: Headers, conn: asyncpg.Connection
) -> None:
    old = await stored(client, alice, OLD, "team")
    new = await stored(client, alice, NEW, "team", supersedes=[old])
    third = await stored(client, alice, "The team's staging cluster has three nodes", "team")
    his = await stored(client, bob, "Bob's own staging notes", "bob-own")
    assert (await share(client, alice, "team", "bob", "read")).status_code == 201
    before = await state(conn)

    seen = await client.get(f"/v1/memories/{old}/links", headers=bob)
    assert seen.status_code == 200, seen.text
    assert seen.json()["superseded_by"] == new
    assert [(x["kind"], x["direction"], x["memory"]["id"]) for x in seen.json()["links"]] == [
        ("supersedes", "in", new)
    ]
    for method, url, body in [
        ("POST", f"/v1/memories/{third}/links", {"kind": "see-also", "target": new}),
        ("POST", f"/v1/memories/{third}/links", {"kind": "supersedes", "target": new}),
        ("DELETE", f"/v1/memories/{new}/links/supersedes/{old}", None),
        (
            "POST",
            "/v1/memories",
            {"content": "Bob says: eu-north-1 now", "namespace": "@alice/team", "supersedes": [new]},
        ),
        (
            "POST",
            "/v1/memories",
            {"content": "Bob's newer notes", "namespace": "bob-own", "supersedes": [third]},
        ),
        ("POST", f"/v1/memories/{his}/links", {"kind": "see-also", "target": third}),
        ("PATCH", f"/v1/memories/{third}", {"valid_to": "2026-01-01T00:00:00Z"}),
    ]:
        answer = await client.request(method, url, json=body, headers=bob)
        assert answer.status_code == 403, (method, url, answer.text)
        assert "read-only" in answer.json()["detail"], answer.text
    assert await state(conn) == before


async def test_a_write_share_links_inside_the_shared_namespace_and_the_owner_sees_it(
    client: Client, alice: Headers, bob: Headers, conn: asyncpg.Connection
) -> None:
    old = await stored(client, alice, OLD, "team")
    his = await stored(client, bob, "Bob's own staging notes", "bob-own")
    assert (await share(client, alice, "team", "bob", "write")).status_code == 201

    new = await stored(client, bob, NEW, "@alice/team", supersedes=[old])
    owners_view = (await client.get(f"/v1/memories/{old}/links", headers=alice)).json()
    assert owners_view["superseded_by"] == new
    assert [(x["kind"], x["direction"], x["memory"]["id"], x["origin"]) for x in owners_view["links"]] == [
        ("supersedes", "in", new, "user")
    ]
    # still one namespace per link: his own memory and hers do not join, and nothing changes
    before = await state(conn)
    across = await client.post(
        f"/v1/memories/{his}/links", json={"kind": "see-also", "target": old}, headers=bob
    )
    assert across.status_code == 422 and "namespace" in across.json()["detail"]
    into_own = await client.post(
        "/v1/memories",
        json={"content": "Bob's view", "namespace": "bob-own", "supersedes": [new]},
        headers=bob,
    )
    assert into_own.status_code == 422, into_own.text
    assert await state(conn) == before
    # he may undo what he did there; the owner's old memory holds again
    undone = await client.delete(f"/v1/memories/{new}/links/supersedes/{old}", headers=bob)
    assert undone.status_code == 204, undone.text
    assert (await client.get(f"/v1/memories/{old}", headers=alice)).json()["valid_to"] is None


async def test_a_superseded_memory_in_a_shared_namespace_leaves_the_grantees_recall_too(
    client: Client, alice: Headers, bob: Headers
) -> None:
    old = await stored(client, alice, OLD, "team")
    new = await stored(client, alice, NEW, "team", supersedes=[old])
    assert (await share(client, alice, "team", "bob", "read")).status_code == 201
    query = {"query": "staging cluster eu-west-1 VPN", "namespace": "@alice/team"}

    answer = await client.post("/v1/recall", json=query, headers=bob)
    assert answer.status_code == 200, answer.text
    hits = answer.json()["results"]
    assert [hit["id"] for hit in hits][:1] == [new] and old not in [hit["id"] for hit in hits]
    assert hits[0]["replaces"] == [old]
    asked = await client.post(
        "/v1/recall", json={**query, "filters": {"include_superseded": True}}, headers=bob
    )
    marked = {hit["id"]: hit["superseded_by"] for hit in asked.json()["results"]}
    assert marked.get(old) == new
    listed = await client.get("/v1/memories?namespace=@alice/team", headers=bob)
    assert [item["id"] for item in listed.json()["items"]] == [new]
    hook = await client.post(
        "/v1/hooks/claude-code/user-prompt-submit?namespace=@alice/team",
        json={
            "prompt": "Where does the staging cluster run, eu-west-1 behind the VPN?",
            "hook_event_name": "UserPromptSubmit",
        },
        headers=bob,
    )
    assert hook.status_code == 200
    assert "old VPN" not in hook.text


def filled(url: str, body: dict[str, Any] | None, memory_id: int) -> tuple[str, Any]:
    """`url` and `body` with `{id}` (in the path, or as the body's target) given as `memory_id`."""
    if body is not None and body["target"] == "{id}":
        body = {**body, "target": memory_id}
    return url.format(id=memory_id), body


async def test_what_the_owner_put_in_the_trash_is_not_found_through_a_share_at_either_end_of_a_link(
    client: Client, alice: Headers, bob: Headers, conn: asyncpg.Connection
) -> None:
    old = await stored(client, alice, OLD, "team")
    new = await stored(client, alice, NEW, "team", supersedes=[old])
    other = await stored(client, alice, "The team's staging cluster has three nodes", "team")
    assert (await share(client, alice, "team", "bob", "write")).status_code == 201
    assert (await client.delete(f"/v1/memories/{new}", headers=alice)).status_code == 204
    before = await state(conn)
    for method, url, body in [
        ("DELETE", f"/v1/memories/{{id}}/links/supersedes/{old}", None),
        ("POST", "/v1/memories/{id}/links", {"kind": "see-also", "target": other}),
        ("POST", f"/v1/memories/{other}/links", {"kind": "see-also", "target": "{id}"}),
        ("GET", "/v1/memories/{id}/links", None),
    ]:
        probe_url, probe_body = filled(url, body, new)
        control_url, control_body = filled(url, body, MISSING)
        probe = await client.request(method, probe_url, json=probe_body, headers=bob)
        control = await client.request(method, control_url, json=control_body, headers=bob)
        assert probe.status_code == 404, (method, probe_url, probe.text)
        assert masked(probe, new) == masked(control, MISSING), (method, probe_url)
    assert await state(conn) == before
    # the owner still finds it in her trash, links and all
    assert (await client.post(f"/v1/memories/{new}/restore", headers=alice)).status_code == 200
    assert (await client.get(f"/v1/memories/{old}/links", headers=alice)).json()["superseded_by"] == new
