"""Scoped, expiring keys: every `/v1` route needs a scope (403 naming it without), an expired key is
401 like an unknown one, `last_used_at` is noted at most once a minute, and `GET /v1/me` tells a key
what it is."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest
from litestar import Litestar
from litestar.routes import HTTPRoute
from litestar.testing import AsyncTestClient

from app.auth.scopes import ADMIN, ALL_SCOPES, ANY_KEY, DEFAULT_SCOPES, READ, SECRETS_READ, WRITE
from app.auth.service import InvalidKeySpec, create_key, get_or_create_user, list_keys
from app.hooks.hosts import HOSTS
from app.hooks.routes import OUTCOME_HEADER
from tests.scoped_keys import bearer, scoped_key

Client = AsyncTestClient[Litestar]
HOOK = "/v1/hooks/claude-code/user-prompt-submit"

# What each /v1 route needs. Reads that are POSTs (recall, graph neighbours) need `read`; changing
# the graph (merge) needs `write`; managing shares needs `admin`; `/v1/me` takes any valid key.
EXPECTED: dict[tuple[str, str], str] = {
    ("GET", "/v1/memories"): READ,
    ("POST", "/v1/memories"): WRITE,
    ("GET", "/v1/memories/{memory_id}"): READ,
    ("PATCH", "/v1/memories/{memory_id}"): WRITE,
    ("DELETE", "/v1/memories/{memory_id}"): WRITE,
    ("GET", "/v1/memories/{memory_id}/secrets"): SECRETS_READ,
    ("POST", "/v1/memories/{memory_id}/promote"): WRITE,
    ("POST", "/v1/memories/{memory_id}/restore"): WRITE,
    ("GET", "/v1/memories/{memory_id}/links"): READ,
    ("GET", "/v1/links"): READ,
    ("POST", "/v1/memories/{memory_id}/links"): WRITE,
    ("DELETE", "/v1/memories/{memory_id}/links/{kind}/{target}"): WRITE,
    **{("POST", f"/v1/capture/{host}"): WRITE for host in HOSTS},  # one capture route per agent
    ("POST", "/v1/recall"): READ,
    ("GET", "/v1/namespaces"): READ,
    ("POST", "/v1/namespaces/rename"): WRITE,
    ("POST", "/v1/namespaces/merge"): WRITE,
    ("GET", "/v1/me"): ANY_KEY,
    ("GET", "/v1/shares"): READ,
    ("POST", "/v1/shares"): ADMIN,
    ("DELETE", "/v1/shares"): ADMIN,
    ("GET", "/v1/graph/concepts"): READ,
    ("GET", "/v1/graph/concepts/{concept_id}"): READ,
    ("GET", "/v1/graph/concepts/{concept_id}/neighborhood"): READ,
    ("POST", "/v1/graph/neighbors"): READ,
    ("POST", "/v1/graph/concepts/{concept_id}/merge"): WRITE,
}


def _v1_routes(app: Litestar) -> set[tuple[str, str]]:
    """Every authenticated (method, path) of the API: OPTIONS needs no key, the hook checks its own."""
    found: set[tuple[str, str]] = set()
    for route in app.routes:
        if not isinstance(route, HTTPRoute) or not route.path.startswith("/v1/"):
            continue
        for method, (handler, _) in route.route_handler_map.items():
            if method != "OPTIONS" and not handler.opt.get("exclude_from_auth"):
                found.add((str(method), route.path_format))
    return found


def _concrete(path: str) -> str:
    path = path.replace("{memory_id}", "1").replace("{concept_id}", "1")
    return path.replace("{kind}", "see-also").replace("{target}", "2")


async def _call(client: Client, method: str, path: str, headers: dict[str, str]) -> Any:
    body: dict[str, Any] | None = {} if method in ("POST", "PATCH") else None
    return await client.request(method, _concrete(path), headers=headers, json=body)


async def test_every_v1_route_names_the_scope_it_needs(app: Litestar) -> None:
    assert _v1_routes(app) == set(EXPECTED), "a route was added or removed: say which scope it needs"


@pytest.mark.parametrize("scope", ALL_SCOPES)
async def test_a_key_without_the_routes_scope_gets_403_naming_it(
    client: Client, conn: asyncpg.Connection, scope: str
) -> None:
    headers = bearer(await scoped_key(conn, "alice", [scope]))
    for (method, path), needed in EXPECTED.items():
        response = await _call(client, method, path, headers)
        where = f"{method} {path} with a {scope} key"
        if needed in (scope, ANY_KEY):
            assert response.status_code not in (401, 403), (where, response.text)
        else:
            assert response.status_code == 403, (where, response.text)
            assert response.headers["content-type"].startswith("application/problem+json")
            problem = response.json()
            assert problem["status"] == 403 and problem["required_scope"] == needed, where
            assert f"`{needed}`" in problem["detail"], where


async def test_a_key_with_every_scope_passes_every_route(client: Client, conn: asyncpg.Connection) -> None:
    headers = bearer(await scoped_key(conn, "alice", ALL_SCOPES))
    for method, path in EXPECTED:
        response = await _call(client, method, path, headers)
        assert response.status_code not in (401, 403), (method, path, response.text)


async def test_the_scope_is_checked_before_the_body_is_read(client: Client, conn: asyncpg.Connection) -> None:
    reader = bearer(await scoped_key(conn, "alice", [READ]))
    response = await client.post(
        "/v1/memories", content=b"{not json", headers={**reader, "Content-Type": "application/json"}
    )
    assert response.status_code == 403
    assert response.json()["required_scope"] == WRITE


async def test_a_read_key_recalls_but_cannot_store(client: Client, conn: asyncpg.Connection) -> None:
    writer = bearer(await scoped_key(conn, "alice", [READ, WRITE]))
    reader = bearer(await scoped_key(conn, "alice", [READ]))
    stored = await client.post(
        "/v1/memories", json={"content": "We deploy with Terraform.", "namespace": "ops"}, headers=writer
    )
    assert stored.status_code == 201, stored.text
    recalled = await client.post(
        "/v1/recall", json={"query": "terraform", "namespace": "ops"}, headers=reader
    )
    assert recalled.status_code == 200 and recalled.json()["results"], recalled.text
    refused = await client.post(
        "/v1/memories", json={"content": "Something else.", "namespace": "ops"}, headers=reader
    )
    assert refused.status_code == 403
    listed = await client.get("/v1/memories?namespace=ops", headers=writer)
    assert [m["content"] for m in listed.json()["items"]] == ["We deploy with Terraform."]


async def test_the_hook_answers_empty_to_a_key_without_read(client: Client, conn: asyncpg.Connection) -> None:
    writer = bearer(await scoped_key(conn, "alice", [WRITE]))
    event = {"hook_event_name": "UserPromptSubmit", "prompt": "how do we deploy to production?"}
    response = await client.post(f"{HOOK}?namespace=ops", json=event, headers=writer)
    assert response.status_code == 200
    assert response.json() == {}
    assert response.headers[OUTCOME_HEADER] == "missing-scope:read"


async def test_the_openapi_document_lists_403_and_429_for_key_routes_but_not_the_hook(client: Client) -> None:
    spec = (await client.get("/schema/openapi.json")).json()
    for method, path in EXPECTED:
        responses = spec["paths"][path][method.lower()]["responses"]
        assert {"401", "403", "429"} <= set(responses), (method, path)
    hook = spec["paths"][HOOK]["post"]["responses"]
    assert "403" not in hook and "429" not in hook


async def test_an_expired_key_is_401_like_an_unknown_one(
    uncached_client: Client, conn: asyncpg.Connection
) -> None:
    client = uncached_client  # a key trusted for a while expires in it too: tests/test_key_cache.py
    created = await scoped_key(conn, "alice", [READ], expires_at=datetime.now(UTC) + timedelta(days=1))
    assert (await client.get("/v1/namespaces", headers=bearer(created))).status_code == 200
    await conn.execute(
        "UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1", created.id
    )
    expired = await client.get("/v1/namespaces", headers=bearer(created))
    unknown = await client.get("/v1/namespaces", headers=bearer("mem_not-a-key"))
    assert expired.status_code == unknown.status_code == 401
    assert expired.json()["detail"] == unknown.json()["detail"]  # no telling expired from never valid
    # the hook refuses it as it refuses every key: `{}` (a 401 would be a hook error on every prompt)
    hook = await client.post(HOOK, json={"prompt": "how do we deploy?"}, headers=bearer(created))
    assert hook.status_code == 200
    assert hook.json() == {}
    assert hook.headers[OUTCOME_HEADER] == "unauthorized"


async def test_last_use_is_noted_at_most_once_a_minute(
    uncached_client: Client, conn: asyncpg.Connection
) -> None:
    client = uncached_client  # a trusted key is looked up (and its use noted) once per key_cache_ttl_s
    created = await scoped_key(conn, "alice", [READ])
    used_at = "SELECT last_used_at FROM api_keys WHERE id = $1"
    assert await conn.fetchval(used_at, created.id) is None
    assert (await client.get("/v1/namespaces", headers=bearer(created))).status_code == 200
    first = await conn.fetchval(used_at, created.id)
    assert first is not None

    # within the minute: a request leaves it as it is
    earlier = first - timedelta(seconds=30)
    await conn.execute("UPDATE api_keys SET last_used_at = $2 WHERE id = $1", created.id, earlier)
    assert (await client.get("/v1/namespaces", headers=bearer(created))).status_code == 200
    assert await conn.fetchval(used_at, created.id) == earlier

    # past it: the next request notes the new time
    stale = first - timedelta(seconds=61)
    await conn.execute("UPDATE api_keys SET last_used_at = $2 WHERE id = $1", created.id, stale)
    assert (await client.get("/v1/namespaces", headers=bearer(created))).status_code == 200
    assert await conn.fetchval(used_at, created.id) > stale
    (info,) = await list_keys(conn, "alice")
    assert info.last_used_at is not None and info.scopes == (READ,)


async def test_me_tells_a_key_its_user_scopes_and_expiry(client: Client, conn: asyncpg.Connection) -> None:
    expires = datetime(2099, 1, 1, tzinfo=UTC)
    created = await scoped_key(conn, "alice", [SECRETS_READ], expires_at=expires)  # not even `read`
    response = await client.get("/v1/me", headers=bearer(created))
    assert response.status_code == 200, response.text
    assert response.json() == {
        "user": "alice",
        "key_id": created.id,
        "key_prefix": created.prefix,
        "scopes": [SECRETS_READ],
        "expires_at": "2099-01-01T00:00:00Z",
    }
    plain = await create_key(conn, "alice")
    assert (await client.get("/v1/me", headers=bearer(plain))).json()["scopes"] == list(DEFAULT_SCOPES)
    assert (await client.get("/v1/me", headers=bearer(plain))).json()["expires_at"] is None


async def test_create_key_refuses_bad_scopes_and_past_expiry(conn: asyncpg.Connection) -> None:
    await get_or_create_user(conn, "alice")
    with pytest.raises(InvalidKeySpec, match="unknown scope"):
        await create_key(conn, "alice", scopes=("read", "root"))
    with pytest.raises(InvalidKeySpec, match="at least one scope"):
        await create_key(conn, "alice", scopes=())
    with pytest.raises(InvalidKeySpec, match="not in the future"):
        await create_key(conn, "alice", expires_at=datetime.now(UTC) - timedelta(minutes=1))
    with pytest.raises(InvalidKeySpec, match="time zone"):
        await create_key(conn, "alice", expires_at=datetime(2099, 1, 1))
    assert await conn.fetchval("SELECT count(*) FROM api_keys") == 0
    made = await create_key(conn, "alice", scopes=(WRITE, READ, READ))
    assert made.scopes == (READ, WRITE)
