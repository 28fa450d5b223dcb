"""Typed links through the REST API: what a supersede hides and gives back, the other kinds, the
refusals (cycles, other namespaces, other tenants), and validity in time (`as_of`)."""

from __future__ import annotations

from typing import Any

import asyncpg
from litestar import Litestar
from litestar.testing import AsyncTestClient

Client = AsyncTestClient[Litestar]

OLD = "Background jobs run on Celery with RabbitMQ as the broker"
NEW = "We moved background jobs to Dramatiq on Redis streams"


async def store(client: Client, headers: dict[str, str], content: str, **fields: Any) -> int:
    answer = await client.post("/v1/memories", json={"content": content, **fields}, headers=headers)
    assert answer.status_code == 201, answer.text
    return int(answer.json()["id"])


async def recall(client: Client, headers: dict[str, str], query: str, **filters: Any) -> list[dict[str, Any]]:
    answer = await client.post(
        "/v1/recall", json={"query": query, "filters": filters, "explain": True}, headers=headers
    )
    assert answer.status_code == 200, answer.text
    results: list[dict[str, Any]] = answer.json()["results"]
    return results


async def link(client: Client, headers: dict[str, str], source: int, kind: str, target: int) -> Any:
    return await client.post(
        f"/v1/memories/{source}/links", json={"kind": kind, "target": target}, headers=headers
    )


async def test_a_superseded_memory_leaves_recall_and_its_query_finds_the_new_version(
    client: Client, alice: dict[str, str]
) -> None:
    old = await store(client, alice, OLD)
    new = await store(client, alice, NEW)
    answer = await link(client, alice, new, "supersedes", old)
    assert answer.status_code == 201, answer.text
    # worded as the old version: the new one answers, in its place, and says what it replaces
    hits = await recall(client, alice, "Celery RabbitMQ broker")
    assert [hit["id"] for hit in hits][:1] == [new]
    assert old not in [hit["id"] for hit in hits]
    assert hits[0]["replaces"] == [old]
    # asked for, the old one comes back marked
    marked = {
        hit["id"]: hit
        for hit in await recall(client, alice, "Celery RabbitMQ broker", include_superseded=True)
    }
    assert marked[old]["superseded_by"] == new and marked[old]["valid_to"] is not None
    listed = (await client.get("/v1/memories", headers=alice)).json()["items"]
    assert [item["id"] for item in listed] == [new]
    everything = (await client.get("/v1/memories?include_superseded=true", headers=alice)).json()["items"]
    assert {item["id"]: item["superseded_by"] for item in everything} == {new: None, old: new}


async def test_undoing_the_supersede_gives_the_old_memory_back(client: Client, alice: dict[str, str]) -> None:
    old = await store(client, alice, OLD)
    new = await store(client, alice, NEW, supersedes=[old])
    links = (await client.get(f"/v1/memories/{old}/links", headers=alice)).json()
    assert links["superseded_by"] == new
    assert [(x["kind"], x["direction"], x["memory"]["id"], x["origin"]) for x in links["links"]] == [
        ("supersedes", "in", new, "user")
    ]
    undone = await client.delete(f"/v1/memories/{new}/links/supersedes/{old}", headers=alice)
    assert undone.status_code == 204, undone.text
    assert (await client.get(f"/v1/memories/{old}", headers=alice)).json()["valid_to"] is None
    assert old in [hit["id"] for hit in await recall(client, alice, "Celery RabbitMQ broker")]
    again = await client.delete(f"/v1/memories/{new}/links/supersedes/{old}", headers=alice)
    assert again.status_code == 404


async def test_deleting_the_head_restores_the_previous_version_and_restoring_it_hides_it_again(
    client: Client, alice: dict[str, str]
) -> None:
    first = await store(client, alice, "The staging database lives in eu-west-1")
    second = await store(client, alice, "The staging database moved to eu-central-1", supersedes=[first])
    third = await store(client, alice, "The staging database moved again, to us-east-2", supersedes=[second])
    hits = await recall(client, alice, "staging database eu-west-1")
    assert hits[0]["id"] == third and hits[0]["replaces"][0] == first
    assert {first, second}.isdisjoint(hit["id"] for hit in hits)
    assert (await client.delete(f"/v1/memories/{third}", headers=alice)).status_code == 204
    ids = [hit["id"] for hit in await recall(client, alice, "staging database")]
    assert second in ids and first not in ids and third not in ids
    assert (await client.post(f"/v1/memories/{third}/restore", headers=alice)).status_code == 200
    ids = [hit["id"] for hit in await recall(client, alice, "staging database")]
    assert ids[:1] == [third] and second not in ids


async def test_a_cycle_and_a_second_supersede_are_refused(client: Client, alice: dict[str, str]) -> None:
    a = await store(client, alice, "Deploys go out on Tuesdays")
    b = await store(client, alice, "Deploys go out on Thursdays", supersedes=[a])
    cycle = await link(client, alice, a, "supersedes", b)
    assert cycle.status_code == 409 and "cycle" in cycle.json()["detail"]
    c = await store(client, alice, "Deploys go out on Fridays")
    twice = await link(client, alice, c, "supersedes", a)
    assert twice.status_code == 409 and twice.json()["existing_id"] == b
    x = await store(client, alice, "The runbook has a part on rollbacks")
    y = await store(client, alice, "The runbook lives in the wiki")
    assert (await link(client, alice, x, "part-of", y)).status_code == 201
    assert (await link(client, alice, y, "part-of", x)).status_code == 409
    assert (await link(client, alice, x, "see-also", x)).status_code == 422
    # see-also has no direction: both ways is no cycle
    assert (await link(client, alice, x, "see-also", y)).status_code == 201
    assert (await link(client, alice, y, "see-also", x)).status_code == 201


async def test_a_link_across_namespaces_or_tenants_is_refused_and_reveals_nothing(
    client: Client, alice: dict[str, str], bob: dict[str, str]
) -> None:
    mine = await store(client, alice, "Alice's service listens on port 8080")
    other_ns = await store(client, alice, "Another project's port is 9090", namespace="other")
    theirs = await store(client, bob, "Bob's service listens on port 7070")
    across = await link(client, alice, mine, "supersedes", other_ns)
    assert across.status_code == 422 and "namespace" in across.json()["detail"]
    probe = await link(client, alice, mine, "supersedes", theirs)
    missing = await link(client, alice, mine, "supersedes", 2**52 + 12345)
    assert probe.status_code == missing.status_code == 404
    assert probe.json()["detail"].replace(str(theirs), "X") == missing.json()["detail"].replace(
        str(2**52 + 12345), "X"
    )
    # nor may Bob link to, list or undo Alice's
    assert (await link(client, bob, theirs, "see-also", mine)).status_code == 404
    assert (await client.get(f"/v1/memories/{mine}/links", headers=bob)).status_code == 404
    assert (
        await client.delete(f"/v1/memories/{mine}/links/see-also/{theirs}", headers=bob)
    ).status_code == 404
    stored = await client.post(
        "/v1/memories", json={"content": "Bob's port is 7171", "supersedes": [mine]}, headers=bob
    )
    assert stored.status_code == 404
    # and Alice's memory is untouched
    assert (await client.get(f"/v1/memories/{mine}", headers=alice)).json()["valid_to"] is None


async def test_a_problem_brings_its_fix_along(client: Client, alice: dict[str, str]) -> None:
    problem = await store(client, alice, "CI fails with 'too many open files' on the integration suite")
    fix = await store(client, alice, "Raise ulimit -n to 65536 in the runner image")
    assert (await link(client, alice, problem, "resolved-by", fix)).status_code == 201
    # one hit asked for: the problem, and its fix after it, which no leg had to find
    answer = await client.post(
        "/v1/recall", json={"query": "too many open files integration suite", "limit": 1}, headers=alice
    )
    hits = answer.json()["results"]
    assert [(hit["id"], hit["came_with"]) for hit in hits] == [(problem, None), (fix, problem)]


async def test_validity_in_time_and_as_of(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    old = await store(client, alice, "The on-call rotation is weekly", valid_from="2026-01-01T00:00:00Z")
    new = await store(client, alice, "The on-call rotation is fortnightly")
    # the newer one starts on March 1st: a supersede ends the older one then
    assert (
        await client.patch(f"/v1/memories/{new}", json={"valid_from": "2026-03-01T00:00:00Z"}, headers=alice)
    ).status_code == 200
    assert (await link(client, alice, new, "supersedes", old)).status_code == 201
    assert (
        (await client.get(f"/v1/memories/{old}", headers=alice)).json()["valid_to"].startswith("2026-03-01")
    )
    february = [
        hit["id"] for hit in await recall(client, alice, "on-call rotation", as_of="2026-02-01T00:00:00Z")
    ]
    assert february == [old]
    now = [hit["id"] for hit in await recall(client, alice, "on-call rotation")]
    assert now == [new]
    listed = (await client.get("/v1/memories?as_of=2026-02-01T00:00:00Z", headers=alice)).json()["items"]
    assert [item["id"] for item in listed] == [old]
    bad = await client.post(
        "/v1/memories",
        json={"content": "x holds", "valid_from": "2026-05-01T00:00:00Z", "valid_to": "2026-04-01T00:00:00Z"},
        headers=alice,
    )
    assert bad.status_code == 422 and "valid_to" in bad.json()["detail"]
    patched = await client.patch(
        f"/v1/memories/{new}", json={"valid_to": "2025-01-01T00:00:00Z"}, headers=alice
    )
    assert patched.status_code == 422
    assert await conn.fetchval("SELECT count(*) FROM memories WHERE content = 'x holds'") == 0


async def test_a_memory_past_its_validity_leaves_recall(client: Client, alice: dict[str, str]) -> None:
    gone = await store(
        client,
        alice,
        "The code freeze lasts until the release",
        valid_from="2025-06-01T00:00:00Z",
        valid_to="2026-01-01T00:00:00Z",
    )
    assert gone not in [hit["id"] for hit in await recall(client, alice, "code freeze release")]
    assert [
        hit["id"] for hit in await recall(client, alice, "code freeze release", as_of="2025-12-01T00:00:00Z")
    ] == [gone]
