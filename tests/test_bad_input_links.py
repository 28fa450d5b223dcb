"""Bad input to the links API and to the validity and supersede fields of store, PATCH, list and
recall: each a 4xx problem body that says what was wrong, never a 500, and nothing stored.

The style of tests/test_bad_input.py, for what typed links (#35) added.
"""

from __future__ import annotations

import json
from typing import Any

import asyncpg
import httpx
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

Client = AsyncTestClient[Litestar]
Headers = dict[str, str]


def assert_problem(response: httpx.Response, status: int, needle: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json"), response.text
    body = response.json()
    assert body["status"] == status
    assert needle in json.dumps(body), body


async def state(conn: asyncpg.Connection) -> tuple[Any, ...]:
    memories = await conn.fetch(
        "SELECT id, content, valid_from, valid_to, updated_at FROM memories ORDER BY id"
    )
    links = await conn.fetch("SELECT source_id, kind, target_id FROM memory_links ORDER BY id")
    return tuple(tuple(r) for r in memories), tuple(tuple(r) for r in links)


async def stored(client: Client, headers: Headers, content: str, **fields: Any) -> int:
    answer = await client.post("/v1/memories", json={"content": content, **fields}, headers=headers)
    assert answer.status_code == 201, answer.text
    return int(answer.json()["id"])


@pytest.fixture
async def two(client: Client, alice: Headers) -> tuple[int, int]:
    return await stored(client, alice, "The API listens on 8080"), await stored(
        client, alice, "It moved to 9090"
    )


BAD_LINK_BODIES = [
    pytest.param({"kind": "replaces", "target": "{b}"}, 422, "kind", id="unknown-kind"),
    pytest.param({"kind": "SUPERSEDES", "target": "{b}"}, 422, "kind", id="kind-in-capitals"),
    pytest.param({"kind": "", "target": "{b}"}, 422, "kind", id="empty-kind"),
    pytest.param({"kind": None, "target": "{b}"}, 422, "kind", id="null-kind"),
    pytest.param({"target": "{b}"}, 422, "kind", id="missing-kind"),
    pytest.param({"kind": "see-also"}, 422, "target", id="missing-target"),
    pytest.param({"kind": "see-also", "target": 0}, 422, "target", id="target-zero"),
    pytest.param({"kind": "see-also", "target": -5}, 422, "target", id="target-negative"),
    pytest.param({"kind": "see-also", "target": 2**63}, 422, "target", id="target-above-bigint"),
    pytest.param({"kind": "see-also", "target": 2**80}, 422, "target", id="target-huge"),
    pytest.param({"kind": "see-also", "target": "12"}, 422, "target", id="target-as-string"),
    pytest.param({"kind": "see-also", "target": 1.5}, 422, "target", id="target-as-float"),
    pytest.param({"kind": "see-also", "target": [1]}, 422, "target", id="target-as-list"),
    pytest.param(
        {"kind": "see-also", "target": "{b}", "origin": "auto"}, 422, "origin", id="origin-not-settable"
    ),
    pytest.param({"kind": "see-also", "target": "{a}"}, 422, "itself", id="link-to-itself"),
    pytest.param({"kind": "see-also", "target": 2**62}, 404, "not found", id="target-nobodys"),
    pytest.param([{"kind": "see-also", "target": "{b}"}], 422, "object", id="a-list"),
    pytest.param("see-also", 422, "object", id="a-string"),
]


@pytest.mark.parametrize(("body", "status", "needle"), BAD_LINK_BODIES)
async def test_a_bad_link_body_is_a_4xx_and_links_nothing(
    client: Client,
    alice: Headers,
    conn: asyncpg.Connection,
    two: tuple[int, int],
    body: Any,
    status: int,
    needle: str,
) -> None:
    a, b = two
    if isinstance(body, dict) and isinstance(body.get("target"), str) and body["target"].startswith("{"):
        body = {**body, "target": int(body["target"].format(a=a, b=b))}
    elif isinstance(body, list):
        body = [{**item, "target": b} for item in body]
    before = await state(conn)
    assert_problem(await client.post(f"/v1/memories/{a}/links", json=body, headers=alice), status, needle)
    assert await state(conn) == before


@pytest.mark.parametrize(
    ("path", "status", "needle"),
    [
        pytest.param("/links/replaces/{b}", 422, "kind", id="unknown-kind"),
        pytest.param("/links/SEE-ALSO/{b}", 422, "kind", id="kind-in-capitals"),
        pytest.param("/links/see-also/0", 422, "target", id="target-zero"),
        pytest.param("/links/see-also/-1", 422, "target", id="target-negative"),
        pytest.param("/links/see-also/9223372036854775808", 422, "target", id="target-above-bigint"),
        pytest.param("/links/see-also/abc", 404, "Not Found", id="target-not-a-number"),
        pytest.param("/links/see-also/{b}", 404, "no link", id="no-such-link"),
    ],
)
async def test_a_bad_undo_path_is_a_4xx_and_undoes_nothing(
    client: Client,
    alice: Headers,
    conn: asyncpg.Connection,
    two: tuple[int, int],
    path: str,
    status: int,
    needle: str,
) -> None:
    a, b = two
    made = await client.post(f"/v1/memories/{a}/links", json={"kind": "part-of", "target": b}, headers=alice)
    assert made.status_code == 201, made.text
    before = await state(conn)
    answer = await client.delete(f"/v1/memories/{a}" + path.format(b=b), headers=alice)
    assert 400 <= answer.status_code < 500, answer.text
    assert_problem(answer, status, needle)
    assert await state(conn) == before


@pytest.mark.parametrize(
    "path",
    [
        "/v1/memories/0/links",
        "/v1/memories/-3/links",
        "/v1/memories/9223372036854775808/links",
        "/v1/memories/abc/links",
        "/v1/memories/1e3/links",
    ],
)
async def test_a_bad_memory_id_in_the_links_path_is_a_4xx(
    client: Client, alice: Headers, conn: asyncpg.Connection, path: str
) -> None:
    for method, body in (("GET", None), ("POST", {"kind": "see-also", "target": 1})):
        answer = await client.request(method, path, json=body, headers=alice)
        assert answer.status_code in (400, 404, 422), (method, path, answer.text)
        assert answer.headers["content-type"].startswith("application/problem+json")
    assert await conn.fetchval("SELECT count(*) FROM memory_links") == 0


BAD_STORE_BODIES = [
    pytest.param(
        {"valid_from": "2026-05-01T00:00:00Z", "valid_to": "2026-04-01T00:00:00Z"},
        422,
        "valid_to",
        id="ends-before-it-starts",
    ),
    pytest.param({"valid_from": "yesterday"}, 422, "valid_from", id="valid-from-not-a-time"),
    pytest.param({"valid_to": 1700000000}, 422, "valid_to", id="valid-to-a-number"),
    pytest.param({"valid_from": "2026-13-01T00:00:00Z"}, 422, "valid_from", id="month-13"),
    pytest.param({"valid_from": "0001-01-01T00:00:00+14:00"}, 422, "valid_from", id="before-year-1-in-utc"),
    pytest.param({"valid_to": "9999-12-31T23:59:59-14:00"}, 422, "valid_to", id="after-year-9999-in-utc"),
    pytest.param({"supersedes": list(range(1, 12))}, 422, "supersedes", id="eleven-ids"),
    pytest.param({"supersedes": [0]}, 422, "supersedes", id="id-zero"),
    pytest.param({"supersedes": [-1]}, 422, "supersedes", id="id-negative"),
    pytest.param({"supersedes": [2**63]}, 422, "supersedes", id="id-above-bigint"),
    pytest.param({"supersedes": ["12"]}, 422, "supersedes", id="id-as-string"),
    pytest.param({"supersedes": 12}, 422, "supersedes", id="not-a-list"),
    pytest.param({"supersedes": [2**62]}, 404, "not found", id="nobodys-id"),
]


@pytest.mark.parametrize(("fields", "status", "needle"), BAD_STORE_BODIES)
async def test_a_bad_validity_or_supersede_on_store_is_a_4xx_and_stores_nothing(
    client: Client, alice: Headers, conn: asyncpg.Connection, fields: dict[str, Any], status: int, needle: str
) -> None:
    old = await stored(client, alice, "The API listens on 8080")
    before = await state(conn)
    answer = await client.post("/v1/memories", json={"content": "It moved to 9090", **fields}, headers=alice)
    assert_problem(answer, status, needle)
    batch = await client.post(
        "/v1/memories",
        json=[{"content": "Fine on its own"}, {"content": "It moved", **fields}],
        headers=alice,
    )
    assert 400 <= batch.status_code < 500, batch.text
    assert await state(conn) == before
    assert (await client.get(f"/v1/memories/{old}", headers=alice)).json()["valid_to"] is None


async def test_a_duplicate_in_supersedes_counts_once(
    client: Client, alice: Headers, conn: asyncpg.Connection
) -> None:
    old = await stored(client, alice, "The API listens on 8080")
    answer = await client.post(
        "/v1/memories", json={"content": "It moved to 9090", "supersedes": [old, old, old]}, headers=alice
    )
    assert answer.status_code == 201, answer.text
    assert answer.json()["superseded"] == [old]
    assert await conn.fetchval("SELECT count(*) FROM memory_links") == 1


async def test_a_supersede_refused_midway_stores_nothing(
    client: Client, alice: Headers, conn: asyncpg.Connection
) -> None:
    first = await stored(client, alice, "Deploys go out on Tuesdays")
    second = await stored(client, alice, "Deploys go out on Thursdays", supersedes=[first])
    elsewhere = await stored(client, alice, "Another project deploys daily", namespace="other")
    before = await state(conn)
    for supersedes, status in (([second, first], 409), ([second, elsewhere], 422), ([second, 2**62], 404)):
        answer = await client.post(
            "/v1/memories",
            json={"content": "Deploys go out on Fridays", "supersedes": supersedes},
            headers=alice,
        )
        assert 400 <= answer.status_code < 500 and answer.status_code == status, answer.text
        assert answer.headers["content-type"].startswith("application/problem+json")
    assert await state(conn) == before


@pytest.mark.parametrize(
    ("patch", "needle"),
    [
        pytest.param({"valid_to": "2025-01-01T00:00:00Z"}, "valid_to", id="ends-before-it-starts"),
        pytest.param({"valid_from": "2027-01-01T00:00:00Z"}, "valid_to", id="starts-after-it-ends"),
        pytest.param(
            {"valid_from": "2026-05-01T00:00:00Z", "valid_to": "2026-04-01T00:00:00Z"},
            "valid_to",
            id="both-the-wrong-way",
        ),
        pytest.param({"valid_from": "soon"}, "valid_from", id="valid-from-not-a-time"),
        pytest.param({"valid_to": True}, "valid_to", id="valid-to-a-bool"),
        pytest.param({"valid_to": "9999-12-31T23:59:59-14:00"}, "valid_to", id="after-year-9999-in-utc"),
        pytest.param({"supersedes": [1]}, "unknown field", id="supersedes-is-not-patched"),
    ],
)
async def test_a_bad_validity_patch_is_a_422_and_changes_nothing(
    client: Client, alice: Headers, conn: asyncpg.Connection, patch: dict[str, Any], needle: str
) -> None:
    memory = await stored(
        client, alice, "The freeze holds", valid_from="2026-02-01T00:00:00Z", valid_to="2026-06-01T00:00:00Z"
    )
    before = await state(conn)
    assert_problem(await client.patch(f"/v1/memories/{memory}", json=patch, headers=alice), 422, needle)
    assert await state(conn) == before


@pytest.mark.parametrize(
    ("query", "needle"),
    [
        pytest.param("as_of=yesterday", "as_of", id="not-a-time"),
        pytest.param("as_of=1700000000", "as_of", id="a-number"),
        pytest.param("as_of=0001-01-01T00:00:00%2B14:00", "as_of", id="before-year-1-in-utc"),
        pytest.param("include_superseded=maybe", "include_superseded", id="not-a-bool"),
    ],
)
async def test_a_bad_as_of_or_include_superseded_on_list_is_a_422(
    client: Client, alice: Headers, query: str, needle: str
) -> None:
    assert_problem(await client.get(f"/v1/memories?{query}", headers=alice), 422, needle)


@pytest.mark.parametrize(
    ("filters", "needle"),
    [
        pytest.param({"as_of": "yesterday"}, "as_of", id="not-a-time"),
        pytest.param({"as_of": 1700000000}, "as_of", id="a-number"),
        pytest.param({"as_of": "0001-01-01T00:00:00+14:00"}, "as_of", id="before-year-1-in-utc"),
        pytest.param({"include_superseded": "yes"}, "include_superseded", id="not-a-bool"),
        pytest.param({"include_superseded": 1}, "include_superseded", id="bool-as-int"),
    ],
)
async def test_a_bad_as_of_or_include_superseded_on_recall_is_a_422(
    client: Client, alice: Headers, filters: dict[str, Any], needle: str
) -> None:
    await stored(client, alice, "something to find")
    answer = await client.post("/v1/recall", json={"query": "something", "filters": filters}, headers=alice)
    assert_problem(answer, 422, needle)


async def test_the_validity_of_a_superseded_memory_is_the_supersedes_and_a_patch_cannot_reopen_it(
    client: Client, alice: Headers, conn: asyncpg.Connection
) -> None:
    old = await stored(client, alice, "Background jobs run on Celery with RabbitMQ as the broker")
    new = await stored(
        client, alice, "We moved background jobs to Dramatiq on Redis streams", supersedes=[old]
    )
    before = await state(conn)
    for valid_to in (None, "2999-01-01T00:00:00Z", "2020-01-01T00:00:00Z"):
        answer = await client.patch(f"/v1/memories/{old}", json={"valid_to": valid_to}, headers=alice)
        assert_problem(answer, 409, "undo that link")
        assert answer.json()["existing_id"] == new
    assert await state(conn) == before
    listed = (await client.get("/v1/memories", headers=alice)).json()["items"]
    assert [item["id"] for item in listed] == [new]
    # its other fields still change; once the link is undone, so does its validity
    assert (
        await client.patch(f"/v1/memories/{old}", json={"importance": 0.9}, headers=alice)
    ).status_code == 200
    assert (
        await client.delete(f"/v1/memories/{new}/links/supersedes/{old}", headers=alice)
    ).status_code == 204
    reopened = await client.patch(
        f"/v1/memories/{old}", json={"valid_to": "2999-01-01T00:00:00Z"}, headers=alice
    )
    assert reopened.status_code == 200, reopened.text
