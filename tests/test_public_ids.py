"""The ids the API shows are public ids: random, so they tell a tenant nothing of anyone else.

The internal identity (a counter shared by every tenant) still counts every store; these tests check
that it does (so they could fail) and that no route answers, takes or encodes it.
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import asyncpg
from alembic import command
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.auth.scopes import READ, SECRETS_READ, WRITE
from app.db.migrate import alembic_config, upgrade_to_head
from app.jobs import JobWorker
from tests.scoped_keys import bearer, scoped_key

Client = AsyncTestClient[Litestar]
JS_SAFE = 2**53
"""A JavaScript number holds every integer below this exactly."""


async def store(client: Client, headers: dict[str, str], *contents: str, namespace: str = "ids") -> list[int]:
    body: Any = [{"content": c, "namespace": namespace} for c in contents]
    response = await client.post("/v1/memories", json=body, headers=headers)
    assert response.status_code == 201, response.text
    return [int(r["id"]) for r in response.json()["results"]]


async def internal_id(conn: asyncpg.Connection, public_id: int) -> int:
    value = await conn.fetchval("SELECT id FROM memories WHERE public_id = $1", public_id)
    assert value is not None, f"no memory has public id {public_id}"
    return int(value)


async def drain(client: Client) -> None:
    """Run the jobs the stores left behind (concept indexing) on the app's own event loop."""
    jobs: JobWorker = client.app.state.jobs
    await asyncio.to_thread(lambda: client.blocking_portal.call(jobs.run_pending))


async def test_ids_between_two_of_my_stores_do_not_count_another_tenants_stores(
    client: Client, alice: dict[str, str], bob: dict[str, str], conn: asyncpg.Connection
) -> None:
    for trial, between in enumerate([0, 1, 3, 8, 20]):
        (first,) = await store(client, alice, f"trial {trial}: first of mine")
        if between:
            await store(client, bob, *(f"trial {trial}: bob's {i}" for i in range(between)))
        (second,) = await store(client, alice, f"trial {trial}: second of mine")
        # the counter did count bob's stores: that is what the API must not show
        assert await internal_id(conn, second) - await internal_id(conn, first) == between + 1
        # a public id difference of between + 1 has a chance of about 2^-52
        assert second - first != between + 1


async def test_my_ids_are_not_in_store_order_and_fit_in_a_javascript_number(
    client: Client, alice: dict[str, str]
) -> None:
    ids = await store(client, alice, *(f"note {i}" for i in range(30)))
    for i in range(10):
        ids += await store(client, alice, f"single {i}")
    assert len(set(ids)) == len(ids)
    assert all(1 <= memory_id < JS_SAFE for memory_id in ids)
    # 40 ids in increasing (or decreasing) order by chance: about 2 / 40!
    assert ids != sorted(ids) and ids != sorted(ids, reverse=True)


async def test_an_unknown_id_and_an_internal_id_are_404(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    (mine,) = await store(client, alice, "the one memory")
    internal = await internal_id(conn, mine)
    taken = {r["public_id"] for r in await conn.fetch("SELECT public_id FROM memories")}
    unknown = next(candidate for candidate in (mine + 1, mine - 1, 12345) if candidate not in taken)
    assert internal not in taken, "a fresh table's identity 1 as a public id: a 2^-53 chance"
    for memory_id in (unknown, internal):
        for method in ("GET", "PATCH", "DELETE"):
            body = {"importance": 0.1} if method == "PATCH" else None
            response = await client.request(method, f"/v1/memories/{memory_id}", json=body, headers=alice)
            assert response.status_code == 404, (method, memory_id, response.text)
    assert (await client.get(f"/v1/memories/{mine}", headers=alice)).status_code == 200


async def test_another_users_public_id_is_404_on_every_memory_route(
    client: Client, alice: dict[str, str], bob: dict[str, str], conn: asyncpg.Connection
) -> None:
    (theirs,) = await store(client, bob, "bob's own note")
    alice_all = bearer(await scoped_key(conn, "alice", [READ, WRITE, SECRETS_READ]))
    for method, path, body in [
        ("GET", f"/v1/memories/{theirs}", None),
        ("GET", f"/v1/memories/{theirs}?include_deleted=true", None),
        ("GET", f"/v1/memories/{theirs}/secrets", None),
        ("PATCH", f"/v1/memories/{theirs}", {"content": "changed by alice"}),
        ("DELETE", f"/v1/memories/{theirs}", None),
        ("DELETE", f"/v1/memories/{theirs}?purge=true", None),
    ]:
        response = await client.request(method, path, json=body, headers=alice_all)
        assert response.status_code == 404, (method, path, response.text)
    still = await client.get(f"/v1/memories/{theirs}", headers=bob)
    assert still.status_code == 200 and still.json()["content"] == "bob's own note"
    assert still.json()["deleted_at"] is None


def _cursor_values(cursor: str) -> list[Any]:
    values = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    assert isinstance(values, list)
    return values


async def test_cursor_pages_over_one_batch_return_each_memory_once_and_hold_no_internal_id(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    stored = await store(client, alice, *(f"batch memory {i}" for i in range(23)), namespace="paged")
    stamps = await conn.fetchval(
        "SELECT count(DISTINCT created_at) FROM memories WHERE public_id = ANY($1::bigint[])", stored
    )
    assert stamps == 1, "one batch, one transaction: one created_at, so only the id orders them"
    internal = {await internal_id(conn, memory_id) for memory_id in stored}

    seen: list[int] = []
    cursor: str | None = None
    for _page in range(10):  # 23 memories, 5 a page: 5 pages
        params: dict[str, Any] = {"namespace": "paged", "limit": 5}
        if cursor is not None:
            params["cursor"] = cursor
        response = await client.get("/v1/memories", params=params, headers=alice)
        assert response.status_code == 200, response.text
        page = response.json()
        seen += [item["id"] for item in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
        carried = [value for value in _cursor_values(cursor) if isinstance(value, int)]
        assert carried == [page["items"][-1]["id"]], "the cursor carries the last public id, only"
        assert not internal & set(carried)
    assert cursor is None
    assert sorted(seen) == sorted(stored), "every memory once, none twice"


async def test_a_page_after_a_purged_cursor_memory_skips_nothing(
    client: Client, alice: dict[str, str]
) -> None:
    stored = await store(client, alice, *(f"purge page {i}" for i in range(6)), namespace="purged")
    first = (await client.get("/v1/memories?namespace=purged&limit=2", headers=alice)).json()
    last_seen = first["items"][-1]["id"]
    purged = await client.delete(f"/v1/memories/{last_seen}?purge=true", headers=alice)
    assert purged.status_code == 204
    rest: list[int] = []
    cursor = first["next_cursor"]
    for _page in range(10):
        page = (
            await client.get(
                "/v1/memories", params={"namespace": "purged", "limit": 2, "cursor": cursor}, headers=alice
            )
        ).json()
        rest += [item["id"] for item in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    left = set(stored) - {item["id"] for item in first["items"]}
    assert left <= set(rest), "no memory stored after the purged one is skipped"
    assert last_seen not in rest


async def test_a_cursor_naming_another_users_memory_does_not_reach_it(
    client: Client, alice: dict[str, str], bob: dict[str, str]
) -> None:
    mine = await store(client, alice, *(f"mine {i}" for i in range(4)), namespace="c")
    (theirs,) = await store(client, bob, "theirs", namespace="c")
    probe = (await client.get(f"/v1/memories/{theirs}", headers=bob)).json()
    forged = base64.urlsafe_b64encode(json.dumps([probe["created_at"], theirs]).encode()).decode().rstrip("=")
    response = await client.get("/v1/memories", params={"namespace": "c", "cursor": forged}, headers=alice)
    assert response.status_code == 200
    assert {item["id"] for item in response.json()["items"]} <= set(mine)


async def test_recall_answers_the_public_ids_the_store_answered(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    stored = await store(
        client, alice, "Postgres vacuum tuning notes", "Vacuum the garage on Sundays", namespace="r"
    )
    response = await client.post(
        "/v1/recall", json={"query": "vacuum", "namespace": "r", "explain": True}, headers=alice
    )
    assert response.status_code == 200, response.text
    hits = [hit["id"] for hit in response.json()["results"]]
    assert sorted(hits) == sorted(stored)
    internal = {await internal_id(conn, memory_id) for memory_id in stored}
    assert not internal & set(hits)


async def test_graph_routes_show_public_concept_and_memory_ids(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    stored = await store(
        client,
        alice,
        "Zephyr runs the Quokka rollout in Lisbon.",
        "Zephyr reviewed the Quokka budget.",
        namespace="g",
    )
    await drain(client)
    found = (await client.get("/v1/graph/concepts", params={"q": "quokka"}, headers=alice)).json()
    quokka = next(c for c in found if c["name"] == "quokka")
    row = await conn.fetchrow("SELECT id, public_id FROM concepts WHERE name = 'quokka'")
    assert quokka["id"] == row["public_id"] and 1 <= quokka["id"] < JS_SAFE
    public_concepts = {r["public_id"] for r in await conn.fetch("SELECT public_id FROM concepts")}
    assert row["id"] not in public_concepts, "an identity that is also a public id: a ~2^-50 chance"
    assert (await client.get(f"/v1/graph/concepts/{row['id']}", headers=alice)).status_code == 404

    detail = (await client.get(f"/v1/graph/concepts/{quokka['id']}", headers=alice)).json()
    assert sorted(m["id"] for m in detail["memories"]) == sorted(stored)

    near = (await client.get(f"/v1/graph/concepts/{quokka['id']}/neighborhood", headers=alice)).json()
    node_ids = {node["id"] for node in near["nodes"]}
    assert quokka["id"] in node_ids and node_ids <= public_concepts
    assert near["edges"], "the two memories' concepts co-occur"
    for edge in near["edges"]:
        assert {edge["source"], edge["target"]} <= public_concepts
        assert edge["evidence"] and set(edge["evidence"]) <= set(stored)

    zephyr = next(n for n in near["nodes"] if n["name"] == "zephyr")
    bulk = await client.post("/v1/graph/neighbors", json={"concept_ids": [quokka["id"]]}, headers=alice)
    assert bulk.status_code == 200, bulk.text
    assert zephyr["id"] in {n["id"] for n in bulk.json()[str(quokka["id"])]}


async def test_a_public_id_collision_on_store_is_drawn_again_not_a_500(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    (taken,) = await store(client, alice, "holds the id first")
    # the next draw repeats the taken id once, then draws as usual
    await conn.execute("CREATE SEQUENCE draws")
    await conn.execute(
        "ALTER TABLE memories ALTER COLUMN public_id SET DEFAULT "
        f"CASE WHEN nextval('draws') = 1 THEN {taken} ELSE memoria_public_id() END"
    )
    response = await client.post(
        "/v1/memories", json={"content": "draws a taken id", "namespace": "ids"}, headers=alice
    )
    assert response.status_code == 201, response.text
    assert response.json()["id"] != taken and response.json()["duplicate"] is False
    assert await conn.fetchval("SELECT last_value FROM draws") == 2, "the first draw collided"


async def test_the_migration_gives_existing_rows_distinct_public_ids(fresh_database: str) -> None:
    command.upgrade(alembic_config(fresh_database, 384), "0007")
    conn = await asyncpg.connect(fresh_database)
    try:
        user = await conn.fetchval("INSERT INTO users (name) VALUES ('old') RETURNING id")
        namespace = await conn.fetchval(
            "INSERT INTO namespaces (user_id, name) VALUES ($1, 'n') RETURNING id", user
        )
        await conn.execute(
            "INSERT INTO memories (namespace_id, content, content_hash) "
            "SELECT $1, 'm' || g, sha256(('m' || g)::bytea) FROM generate_series(1, 2500) g",
            namespace,
        )
        await conn.execute(
            "INSERT INTO concepts (namespace_id, name, display_name) "
            "SELECT $1, 'c' || g, 'c' || g FROM generate_series(1, 50) g",
            namespace,
        )
        upgrade_to_head(fresh_database, 384)
        for table in ("memories", "concepts"):
            count, distinct, low, high = await conn.fetchrow(
                f"SELECT count(*), count(DISTINCT public_id), min(public_id), max(public_id) FROM {table}"
            )
            assert count == distinct and low >= 1 and high < JS_SAFE
            assert await conn.fetchval(
                "SELECT indisvalid AND indisunique FROM pg_index WHERE indexrelid = $1::regclass",
                f"{table}_public_id_key",
            )
        # and a row inserted after it draws one by default
        fresh = await conn.fetchval(
            "INSERT INTO memories (namespace_id, content, content_hash) VALUES ($1, 'new', sha256('new')) "
            "RETURNING public_id",
            namespace,
        )
        assert 1 <= fresh < JS_SAFE
    finally:
        await conn.close()
