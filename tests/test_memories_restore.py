"""`POST /v1/memories/{id}/restore`: undoing a soft delete (the web UI's "Undo" after "Forget")."""

from __future__ import annotations

import asyncio

import asyncpg
from litestar import Litestar
from litestar.testing import AsyncTestClient

Client = AsyncTestClient[Litestar]


async def store(client: Client, headers: dict[str, str], content: str) -> int:
    answer = await client.post("/v1/memories", json={"content": content}, headers=headers)
    assert answer.status_code == 201, answer.text
    return int(answer.json()["id"])


async def drain(client: Client) -> None:
    jobs = client.app.state.jobs
    await asyncio.to_thread(lambda: client.blocking_portal.call(jobs.run_pending))


async def test_a_restored_memory_is_live_again_with_its_concepts(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    memory_id = await store(client, alice, "Priya runs the Kubernetes upgrade from Lisbon")
    await drain(client)
    links = (
        "SELECT count(*) FROM memory_concepts mc JOIN memories m ON m.id = mc.memory_id "
        "WHERE m.public_id = $1"
    )
    linked = await conn.fetchval(links, memory_id)
    assert linked > 0
    assert (await client.delete(f"/v1/memories/{memory_id}", headers=alice)).status_code == 204
    assert await conn.fetchval(links, memory_id) == 0
    answer = await client.post(f"/v1/memories/{memory_id}/restore", headers=alice)
    assert answer.status_code == 200, answer.text
    assert answer.json()["deleted_at"] is None
    assert (await client.get(f"/v1/memories/{memory_id}", headers=alice)).status_code == 200
    await drain(client)  # the indexing job the restore enqueued
    assert await conn.fetchval(links, memory_id) == linked
    recalled = await client.post("/v1/recall", json={"query": "Kubernetes upgrade Lisbon"}, headers=alice)
    assert memory_id in [hit["id"] for hit in recalled.json()["results"]]


async def test_restoring_beside_a_live_copy_is_a_conflict_naming_it(
    client: Client, alice: dict[str, str]
) -> None:
    first = await store(client, alice, "The deploy freeze starts on the 20th")
    assert (await client.delete(f"/v1/memories/{first}", headers=alice)).status_code == 204
    second = await store(client, alice, "The deploy freeze starts on the 20th")
    assert second != first
    answer = await client.post(f"/v1/memories/{first}/restore", headers=alice)
    assert answer.status_code == 409, answer.text
    assert answer.json()["existing_id"] == second
    assert (await client.get(f"/v1/memories/{first}", headers=alice)).status_code == 404


async def test_restoring_a_live_memory_leaves_it_as_it_is(client: Client, alice: dict[str, str]) -> None:
    memory_id = await store(client, alice, "Tabs, not spaces, in the Makefile")
    before = (await client.get(f"/v1/memories/{memory_id}", headers=alice)).json()
    answer = await client.post(f"/v1/memories/{memory_id}/restore", headers=alice)
    assert answer.status_code == 200
    assert answer.json()["updated_at"] == before["updated_at"]


async def test_nobody_else_can_restore_a_memory(
    client: Client, alice: dict[str, str], bob: dict[str, str]
) -> None:
    memory_id = await store(client, alice, "Alice's private note")
    assert (await client.delete(f"/v1/memories/{memory_id}", headers=alice)).status_code == 204
    assert (await client.post(f"/v1/memories/{memory_id}/restore", headers=bob)).status_code == 404
    assert (await client.get(f"/v1/memories/{memory_id}", headers=alice)).status_code == 404
    purged = await store(client, alice, "gone for good")
    assert (await client.delete(f"/v1/memories/{purged}?purge=true", headers=alice)).status_code == 204
    assert (await client.post(f"/v1/memories/{purged}/restore", headers=alice)).status_code == 404
