"""Store / read / list / update / delete round trips through the real API and database."""

from __future__ import annotations

import asyncpg
from litestar import Litestar
from litestar.testing import AsyncTestClient

Client = AsyncTestClient[Litestar]


async def store(client: Client, headers: dict[str, str], **fields: object) -> dict[str, object]:
    response = await client.post("/v1/memories", json=fields, headers=headers)
    assert response.status_code in (200, 201), response.text
    return dict(response.json())


async def test_store_then_read_returns_every_field(client: Client, alice: dict[str, str]) -> None:
    created = await store(
        client,
        alice,
        content="  The deploy pipeline runs on GitHub Actions.  ",
        namespace="repo:memoria",
        category="decision",
        tags=["ci", "deploy"],
        importance=0.9,
        expanded_keywords="continuous integration workflow",
        source="chat",
        metadata={"ticket": 42},
    )
    assert created["duplicate"] is False and created["embedded"] is True
    response = await client.get(f"/v1/memories/{created['id']}", headers=alice)
    assert response.status_code == 200
    memory = response.json()
    assert memory["content"] == "The deploy pipeline runs on GitHub Actions."
    assert memory["namespace"] == "repo:memoria"
    assert memory["category"] == "decision"
    assert memory["tags"] == ["ci", "deploy"]
    assert memory["importance"] == 0.9, "the value stored, not its float4 widened to a double"
    assert memory["expanded_keywords"] == "continuous integration workflow"
    assert memory["metadata"] == {"ticket": 42}
    assert memory["embedding_model"] == "all-MiniLM-L6-v2"
    assert memory["deleted_at"] is None


async def test_store_writes_embedding_and_weighted_tsvector(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    created = await store(client, alice, content="Postgres vacuum tuning", tags=["dba"], category="runbook")
    row = await conn.fetchrow(
        "SELECT vector_dims(embedding) AS dims, search_vector::text AS tsv FROM memories"
        " WHERE public_id = $1",
        created["id"],
    )
    assert row["dims"] == 384
    assert "'postgr':1A" in row["tsv"] and "'dba':4C" in row["tsv"] and "'runbook':5 " in row["tsv"] + " "


async def test_identical_content_in_a_namespace_is_stored_once(client: Client, alice: dict[str, str]) -> None:
    first = await client.post("/v1/memories", json={"content": "Use tabs"}, headers=alice)
    second = await client.post("/v1/memories", json={"content": "Use tabs "}, headers=alice)
    assert first.status_code == 201 and second.status_code == 200
    assert second.json() == {**first.json(), "duplicate": True, "embedded": False}
    other_ns = await store(client, alice, content="Use tabs", namespace="other")
    assert other_ns["duplicate"] is False and other_ns["id"] != first.json()["id"]


async def test_batch_store_reports_duplicates_within_and_across_batches(
    client: Client, alice: dict[str, str]
) -> None:
    existing = await store(client, alice, content="alpha")
    response = await client.post(
        "/v1/memories",
        json=[{"content": "alpha"}, {"content": "beta"}, {"content": "beta"}, {"content": "gamma"}],
        headers=alice,
    )
    assert response.status_code == 201
    results = response.json()["results"]
    assert [r["duplicate"] for r in results] == [True, False, True, False]
    assert results[0]["id"] == existing["id"]
    assert results[1]["id"] == results[2]["id"]
    assert len({r["id"] for r in results}) == 3


async def test_patch_content_re_embeds_and_re_indexes(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    created = await store(client, alice, content="We use MySQL for billing", tags=["db"])
    before = await conn.fetchval("SELECT embedding::text FROM memories WHERE public_id = $1", created["id"])
    response = await client.patch(
        f"/v1/memories/{created['id']}",
        json={"content": "We migrated billing to PostgreSQL", "importance": 1.0, "category": None},
        headers=alice,
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["content"] == "We migrated billing to PostgreSQL" and body["tags"] == ["db"]
    row = await conn.fetchrow(
        "SELECT embedding::text AS emb, search_vector @@ to_tsquery('english', 'postgresql') AS hit, "
        "search_vector @@ to_tsquery('english', 'mysql') AS old_hit FROM memories WHERE public_id = $1",
        created["id"],
    )
    assert row["emb"] != before and row["hit"] is True and row["old_hit"] is False
    # the new content now deduplicates; the old content is free again
    again = await store(client, alice, content="We migrated billing to PostgreSQL")
    assert again["duplicate"] is True and again["id"] == created["id"]


async def test_patch_to_content_of_another_memory_conflicts(client: Client, alice: dict[str, str]) -> None:
    a = await store(client, alice, content="first")
    b = await store(client, alice, content="second")
    response = await client.patch(f"/v1/memories/{b['id']}", json={"content": "first"}, headers=alice)
    assert response.status_code == 409
    assert response.json()["existing_id"] == a["id"]


async def test_soft_delete_hides_and_purge_removes(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    created = await store(client, alice, content="temporary note")
    memory_id = created["id"]
    assert (await client.delete(f"/v1/memories/{memory_id}", headers=alice)).status_code == 204
    assert (await client.get(f"/v1/memories/{memory_id}", headers=alice)).status_code == 404
    shown = await client.get(f"/v1/memories/{memory_id}?include_deleted=true", headers=alice)
    assert shown.status_code == 200 and shown.json()["deleted_at"] is not None
    listed = (await client.get("/v1/memories", headers=alice)).json()["items"]
    assert listed == []
    with_deleted = (await client.get("/v1/memories?include_deleted=true", headers=alice)).json()["items"]
    assert [m["id"] for m in with_deleted] == [memory_id]
    # the same content can be stored again after a soft delete
    again = await store(client, alice, content="temporary note")
    assert again["duplicate"] is False and again["id"] != memory_id
    purge = await client.delete(f"/v1/memories/{memory_id}?purge=true", headers=alice)
    assert purge.status_code == 204
    assert await conn.fetchval("SELECT count(*) FROM memories WHERE public_id = $1", memory_id) == 0
    assert (await client.delete(f"/v1/memories/{memory_id}", headers=alice)).status_code == 404


async def test_list_paginates_with_a_stable_cursor(client: Client, alice: dict[str, str]) -> None:
    response = await client.post(
        "/v1/memories", json=[{"content": f"note {i}"} for i in range(7)], headers=alice
    )
    ids = [r["id"] for r in response.json()["results"]]
    seen: list[int] = []
    cursor = None
    pages = 0
    while True:
        params = {"limit": 3} | ({"cursor": cursor} if cursor else {})
        page = (await client.get("/v1/memories", params=params, headers=alice)).json()
        seen += [m["id"] for m in page["items"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
        # an insert between pages must not shift or repeat what follows
        await store(client, alice, content=f"inserted during paging {pages}")
    assert pages == 3
    # newest first: one batch shares its created_at, so last stored first (ids are random, unordered)
    assert seen == ids[::-1]


async def test_list_filters_by_namespace_category_source_tags_and_time(
    client: Client, alice: dict[str, str]
) -> None:
    a = await store(client, alice, content="a", namespace="ns1", category="fact", tags=["x", "y"])
    b = await store(client, alice, content="b", namespace="ns1", category="pref", tags=["x"], source="codex")
    c = await store(client, alice, content="c", namespace="ns2", tags=["y"], source="claude-code")

    async def ids(params: dict[str, str | list[str]]) -> set[int]:
        response = await client.get("/v1/memories", params=params, headers=alice)
        assert response.status_code == 200, response.text
        return {m["id"] for m in response.json()["items"]}

    assert await ids({"namespace": "ns1"}) == {a["id"], b["id"]}
    assert await ids({"namespace": ["ns1", "ns2"]}) == {a["id"], b["id"], c["id"]}
    assert await ids({"category": "pref"}) == {b["id"]}
    assert await ids({"source": "codex"}) == {b["id"]}
    assert await ids({"source": "claude-code", "namespace": ["ns1", "ns2"]}) == {c["id"]}
    assert await ids({"source": "gemini"}) == set()
    empty = await client.get("/v1/memories", params={"source": ""}, headers=alice)
    assert empty.status_code == 422 and "source" in empty.text
    assert await ids({"tags": ["x", "y"]}) == {a["id"], b["id"], c["id"]}
    assert await ids({"tags": ["x", "y"], "tags_match": "all"}) == {a["id"]}
    assert await ids({"created_since": "2000-01-01T00:00:00Z"}) == {a["id"], b["id"], c["id"]}
    assert await ids({"created_until": "2000-01-01T00:00:00"}) == set()


async def test_sensitive_memories_are_listed_only_when_asked(client: Client, alice: dict[str, str]) -> None:
    secret = await store(client, alice, content="The staging DB password is hunter2", is_sensitive=True)
    plain = await store(client, alice, content="Staging lives in eu-west-1")
    default = (await client.get("/v1/memories", headers=alice)).json()["items"]
    assert [m["id"] for m in default] == [plain["id"]]
    explicit = (await client.get("/v1/memories?include_sensitive=true", headers=alice)).json()["items"]
    assert {m["id"] for m in explicit} == {plain["id"], secret["id"]}


async def test_namespaces_lists_counts(client: Client, alice: dict[str, str]) -> None:
    await store(client, alice, content="one", namespace="p1")
    await store(client, alice, content="two", namespace="p1")
    await store(client, alice, content="three", namespace="p2")
    response = await client.get("/v1/namespaces", headers=alice)
    assert response.json() == [{"name": "p1", "memories": 2}, {"name": "p2", "memories": 1}]


async def test_healthz_and_readyz(client: Client) -> None:
    assert (await client.get("/healthz")).json() == {"status": "ok"}
    ready = await client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready"}  # which check is which: admin keys only (test_readyz_details)


async def test_openapi_schema_is_served(client: Client) -> None:
    schema = (await client.get("/schema/openapi.json")).json()
    assert "/v1/memories" in schema["paths"]


async def test_importance_reads_back_as_stored_in_lists_and_recall(
    client: Client, alice: dict[str, str]
) -> None:
    created = await store(
        client, alice, content="Importance survives the real column", namespace="reals", importance=0.3
    )
    listed = (await client.get("/v1/memories?namespace=reals", headers=alice)).json()["items"]
    assert [m["importance"] for m in listed if m["id"] == created["id"]] == [0.3]
    recalled = await client.post(
        "/v1/recall", json={"query": "importance real column", "namespaces": ["reals"]}, headers=alice
    )
    assert recalled.status_code == 200, recalled.text
    assert [hit["importance"] for hit in recalled.json()["results"]] == [0.3]
