"""Every bad input gets a 4xx problem body that says what was wrong, and nothing is written."""

from __future__ import annotations

import base64
import json

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

Client = AsyncTestClient[Litestar]

BAD_STORE_BODIES = [
    pytest.param({}, 422, "content", id="missing-content"),
    pytest.param({"content": 5}, 422, "Expected `str`", id="content-wrong-type"),
    pytest.param({"content": ""}, 422, "must not be empty", id="empty-content"),
    pytest.param({"content": "   \n\t"}, 422, "must not be empty", id="blank-content"),
    pytest.param({"content": "x" * 4001}, 422, "limit is 4000", id="over-long-content"),
    pytest.param({"content": "ok", "importance": 1.5}, 422, "<= 1.0", id="importance-above-1"),
    pytest.param({"content": "ok", "importance": -0.1}, 422, ">= 0.0", id="importance-below-0"),
    pytest.param(
        {"content": "ok", "importance": "high"}, 422, "Expected `float`", id="importance-wrong-type"
    ),
    pytest.param(
        {"content": "ok", "tags": [f"t{i}" for i in range(33)]}, 422, "limit is 32", id="too-many-tags"
    ),
    pytest.param({"content": "ok", "tags": "notalist"}, 422, "Expected `array`", id="tags-wrong-type"),
    pytest.param({"content": "ok", "tags": [""]}, 422, "must not be empty", id="empty-tag"),
    pytest.param({"content": "a\u0000b"}, 422, "NUL", id="nul-in-content"),
    pytest.param({"content": "ok", "metadata": {"k": "v\u0000"}}, 422, "NUL", id="nul-in-metadata"),
    pytest.param({"content": "ok", "tags": ["a\u0000"]}, 422, "NUL", id="nul-in-tag"),
    pytest.param({"content": "ok", "colour": "red"}, 422, "unknown field `colour`", id="unknown-field"),
    pytest.param({"content": "ok", "namespace": "../etc"}, 422, "invalid namespace", id="bad-namespace"),
    pytest.param({"content": "ok", "namespace": ""}, 422, "invalid namespace", id="empty-namespace"),
    pytest.param({"content": "ok", "category": "c" * 65}, 422, "length <= 64", id="long-category"),
    pytest.param([], 422, "batch is empty", id="empty-batch"),
    pytest.param([{"content": f"m{i}"} for i in range(101)], 422, "at most 100", id="batch-too-large"),
    pytest.param([{"content": "fine"}, {"content": ""}], 422, "[1].content", id="bad-item-in-batch"),
    pytest.param("just a string", 422, "Expected `object | array`", id="json-string-body"),
    pytest.param({"content": "ok", "importance": "0.5"}, 422, "Expected `float`", id="number-as-string"),
    pytest.param({"content": "ok", "is_sensitive": 1}, 422, "Expected `bool`, got `int`", id="bool-as-int"),
    pytest.param({"content": "ok", "category": "a\u0000"}, 422, "category", id="nul-in-category"),
]


async def _memory_count(conn: asyncpg.Connection) -> int:
    return int(await conn.fetchval("SELECT count(*) FROM memories"))


def _cursor(stamp: str, memory_id: object) -> str:
    """A cursor as the API encodes one (base64url of `[created_at, id]`), here forged."""
    return base64.urlsafe_b64encode(json.dumps([stamp, memory_id]).encode()).decode().rstrip("=")


def _assert_problem(response: object, status: int, needle: str) -> None:
    assert response.status_code == status, response.text  # type: ignore[attr-defined]
    assert response.headers["content-type"].startswith("application/problem+json")  # type: ignore[attr-defined]
    body = response.json()  # type: ignore[attr-defined]
    assert body["status"] == status
    assert needle in json.dumps(body), body


@pytest.mark.parametrize(("body", "status", "needle"), BAD_STORE_BODIES)
async def test_bad_store_body_is_rejected_without_writing(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection, body: object, status: int, needle: str
) -> None:
    response = await client.post("/v1/memories", json=body, headers=alice)
    _assert_problem(response, status, needle)
    assert await _memory_count(conn) == 0


@pytest.mark.parametrize(
    "raw",
    [
        b'{"content": ',
        b"not json",
        b'{"content": "a"}}',
        b"\xff\xfe",
        b'{"content": "\xff"}',
        b'{"content": "ok", "metadata": {"k": "\xed\xa0\x80"}}',
    ],
    ids=[
        "truncated",
        "not-json",
        "trailing-garbage",
        "not-utf8",
        "not-utf8-in-string",
        "surrogate-in-string",
    ],
)
async def test_invalid_json_is_a_400(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection, raw: bytes
) -> None:
    response = await client.post(
        "/v1/memories", content=raw, headers=alice | {"content-type": "application/json"}
    )
    _assert_problem(response, 400, "not valid JSON")
    assert await _memory_count(conn) == 0


@pytest.mark.parametrize(
    ("path", "raw"),
    [
        pytest.param("/v1/memories", b'{"content": "kept", "content": "stored instead"}', id="store"),
        pytest.param(
            "/v1/memories", b'[{"content": "one"}, {"content": "two", "tags": ["a"], "tags": []}]', id="batch"
        ),
        pytest.param(
            "/v1/recall", b'{"query": "deploy", "filters": {"kinds": ["memory"], "kinds": null}}', id="recall"
        ),
        pytest.param(
            "/v1/hooks/claude-code/user-prompt-submit",
            b'{"prompt": "how do we deploy?", "prompt": "something else"}',
            id="hook",
        ),
    ],
)
async def test_a_key_twice_in_one_object_is_a_400_whatever_the_route(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection, path: str, raw: bytes
) -> None:
    # a decoder keeps one of the two silently: which one the caller meant is unknown
    response = await client.post(path, content=raw, headers=alice | {"content-type": "application/json"})
    _assert_problem(response, 400, "appears twice in one object")
    assert await _memory_count(conn) == 0


async def test_empty_body_is_a_400_that_says_so(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    for method, path in [("POST", "/v1/memories"), ("POST", "/v1/recall")]:
        response = await client.request(
            method, path, content=b"", headers=alice | {"content-type": "application/json"}
        )
        _assert_problem(response, 400, "request body is empty")
    assert await _memory_count(conn) == 0


def _nested(before: str, depth: int, after: str) -> str:
    """`before` + an array nested `depth` levels deep + `after`."""
    return before + "[" * depth + "]" * depth + after


# ~990 levels passed the JSON decoder and failed deeper in the stack (RecursionError, 500);
# 100,000 levels fail in the decoder itself.
DEEP_BODIES = [
    *(
        pytest.param(
            "/v1/memories",
            _nested('{"content": "x", "metadata": {"k": ', depth, "}}"),
            id=f"store-metadata-{depth}",
        )
        for depth in (990, 100_000)
    ),
    pytest.param("/v1/memories", _nested('[{"content": "x", "tags": ', 990, "}]"), id="store-tags-990"),
    pytest.param("/v1/recall", _nested('{"query": "x", "filters": {"tags": ', 990, "}}"), id="recall-990"),
    pytest.param("/v1/recall", _nested('{"query": "x", "zz": ', 100_000, "}"), id="recall-100000"),
    pytest.param(
        "/v1/hooks/claude-code/user-prompt-submit",
        _nested('{"prompt": "how do we deploy?", "extra": ', 100_000, "}"),
        id="hook-100000",
    ),
    pytest.param("/v1/graph/neighbors", _nested('{"concept_ids": ', 990, "}"), id="graph-neighbors-990"),
]


@pytest.mark.parametrize(("path", "body"), DEEP_BODIES)
async def test_deeply_nested_json_is_a_4xx_and_writes_nothing(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection, path: str, body: str
) -> None:
    response = await client.post(
        path, content=body.encode(), headers=alice | {"content-type": "application/json"}
    )
    assert 400 <= response.status_code < 500, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert await _memory_count(conn) == 0


async def test_body_over_the_size_limit_is_a_413(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    body = json.dumps({"content": "x" * 2_000_000}).encode()
    response = await client.post(
        "/v1/memories", content=body, headers=alice | {"content-type": "application/json"}
    )
    assert response.status_code == 413
    assert await _memory_count(conn) == 0


async def test_bad_patch_bodies_leave_the_memory_unchanged(client: Client, alice: dict[str, str]) -> None:
    created = (await client.post("/v1/memories", json={"content": "keep me"}, headers=alice)).json()
    url = f"/v1/memories/{created['id']}"
    for body, needle in [
        ({"content": ""}, "must not be empty"),
        ({"importance": 2}, "<= 1.0"),
        ({"namespace": "elsewhere"}, "unknown field"),
        ({"content": "x" * 5000}, "limit is 4000"),
        ({"metadata": {"\u0000": 1}}, "NUL"),
    ]:
        _assert_problem(await client.patch(url, json=body, headers=alice), 422, needle)
    memory = (await client.get(url, headers=alice)).json()
    assert memory["content"] == "keep me" and memory["importance"] == 0.5


async def test_a_cursor_from_the_api_still_pages(client: Client, alice: dict[str, str]) -> None:
    for i in range(3):
        await client.post("/v1/memories", json={"content": f"memory {i}"}, headers=alice)
    first = (await client.get("/v1/memories?limit=2", headers=alice)).json()
    second = await client.get(f"/v1/memories?limit=2&cursor={first['next_cursor']}", headers=alice)
    assert second.status_code == 200, second.text
    assert [m["content"] for m in second.json()["items"]] == ["memory 0"]


@pytest.mark.parametrize(
    ("path", "status", "needle"),
    [
        ("/v1/memories/0", 422, "memory_id"),
        ("/v1/memories/abc", 404, "Not Found"),
        ("/v1/memories/99999999999999999999999", 422, "memory_id"),
        ("/v1/memories?namespace=nope", 404, "namespace 'nope' not found"),
        ("/v1/memories?limit=0", 422, "limit"),
        ("/v1/memories?limit=1000", 422, "limit"),
        ("/v1/memories?cursor=%%%", 422, "cursor"),
        ("/v1/memories?cursor=bm90LWpzb24", 422, "cursor"),
        ("/v1/memories?created_since=yesterday", 422, "created_since"),
        ("/v1/memories?tags_match=some", 422, "tags_match"),
        ("/v1/memories?tags=a%00b", 422, "tags"),
        ("/v1/memories?category=a%00b", 422, "category"),
        ("/v1/memories?created_since=0001-01-01T00:00:00%2B14:00", 422, "created_since"),
        ("/v1/memories?created_until=9999-12-31T23:59:59-14:00", 422, "created_until"),
        ("/v1/memories?created_until=0.5", 422, "RFC 3339"),
        ("/v1/memories?created_since=1700000000", 422, "RFC 3339"),
        ("/v1/memories?cursor=" + _cursor("2020-01-01T00:00:00+00:00", 2**63), 422, "cursor"),
        ("/v1/memories?cursor=" + _cursor("0001-01-01T00:00:00+14:00", 1), 422, "cursor"),
        ("/v1/memories?cursor=" + _cursor("2020-01-01T00:00:00+00:00", "1"), 422, "cursor"),
        ("/v1/memories?cursor=" + base64.urlsafe_b64encode(b"[" * 5000).decode(), 422, "cursor"),
        ("/v1/graph/concepts/9223372036854775808", 422, "concept_id"),
    ],
)
async def test_bad_query_and_path_values_are_4xx(
    client: Client, alice: dict[str, str], path: str, status: int, needle: str
) -> None:
    _assert_problem(await client.get(path, headers=alice), status, needle)


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer"}, {"Authorization": "Basic abc"}, {"Authorization": "Bearer mem_wrong"}],
    ids=["none", "empty-bearer", "wrong-scheme", "unknown-key"],
)
async def test_missing_or_wrong_key_is_a_401(client: Client, headers: dict[str, str]) -> None:
    for method, path in [("GET", "/v1/memories"), ("POST", "/v1/memories"), ("GET", "/v1/memories/1")]:
        response = await client.request(method, path, headers=headers, json={"content": "x"})
        _assert_problem(response, 401, "key")


async def test_revoked_key_stops_working(uncached_client: Client, conn: asyncpg.Connection) -> None:
    client = uncached_client  # a replica that trusts keys for a while: tests/test_key_cache.py
    from app.auth.service import create_key, create_user, revoke_key

    await create_user(conn, "carol")
    created = await create_key(conn, "carol")
    headers = {"Authorization": f"Bearer {created.key}"}
    assert (await client.get("/v1/memories", headers=headers)).status_code == 200
    assert await revoke_key(conn, str(created.id))
    _assert_problem(await client.get("/v1/memories", headers=headers), 401, "revoked")


async def test_only_a_hash_of_each_key_is_stored(conn: asyncpg.Connection) -> None:
    from app.auth.service import create_key, create_user

    await create_user(conn, "dave")
    created = await create_key(conn, "dave")
    dump = await conn.fetchval("SELECT string_agg(t::text, ' ') FROM api_keys t")
    assert created.key not in dump and created.key[10:] not in dump


BAD_RECALL_BODIES = [
    pytest.param(
        {"query": "x", "filters": {"category": "a\u0000b"}}, "filters.category", id="nul-in-category"
    ),
    pytest.param(
        {"query": "x", "filters": {"created_since": "0001-01-01T00:00:00+14:00"}},
        "created_since",
        id="since-before-year-1-in-utc",
    ),
    pytest.param(
        {"query": "x", "filters": {"created_until": "9999-12-31T23:59:59-14:00"}},
        "created_until",
        id="until-after-year-9999-in-utc",
    ),
    pytest.param({"query": "x", "explain": 0}, "explain: Expected `bool`, got `int`", id="bool-as-int"),
    pytest.param({"query": "x", "limit": "5"}, "limit: Expected `int`, got `str`", id="int-as-string"),
    pytest.param({"query": "x", "limit": 5.5}, "limit: Expected `int`, got `float`", id="int-as-float"),
    pytest.param(
        {"query": "x", "filters": {"created_since": 0.5}},
        "Expected `datetime | null`, got `float`",
        id="datetime-as-number",
    ),
]


@pytest.mark.parametrize(("body", "needle"), BAD_RECALL_BODIES)
async def test_bad_recall_body_is_a_422(
    client: Client, alice: dict[str, str], body: object, needle: str
) -> None:
    await client.post("/v1/memories", json={"content": "something to find"}, headers=alice)
    _assert_problem(await client.post("/v1/recall", json=body, headers=alice), 422, needle)


@pytest.mark.parametrize(
    ("path", "body", "needle"),
    [
        ("/v1/graph/neighbors", {"concept_ids": [2**63]}, "concept_ids[0]"),
        ("/v1/graph/neighbors", {"concept_ids": [1, 2**64]}, "concept_ids[1]"),
        ("/v1/graph/concepts/1/merge", {"into": 2**63}, "into"),
    ],
)
async def test_ids_above_the_bigint_range_are_a_422(
    client: Client, alice: dict[str, str], path: str, body: object, needle: str
) -> None:
    _assert_problem(await client.post(path, json=body, headers=alice), 422, needle)
