"""A key acts for its own user only: another user's ids answer 404 on every route."""

from __future__ import annotations

from litestar import Litestar
from litestar.testing import AsyncTestClient

Client = AsyncTestClient[Litestar]


async def test_second_user_cannot_touch_first_users_memories(
    client: Client, alice: dict[str, str], bob: dict[str, str]
) -> None:
    created = (
        await client.post(
            "/v1/memories", json={"content": "alice's secret plan", "namespace": "private"}, headers=alice
        )
    ).json()
    memory_id = created["id"]
    url = f"/v1/memories/{memory_id}"

    attempts = [
        await client.get(url, headers=bob),
        await client.get(f"{url}?include_deleted=true", headers=bob),
        await client.patch(url, json={"content": "hijacked"}, headers=bob),
        await client.patch(url, json={"importance": 1}, headers=bob),
        await client.delete(url, headers=bob),
        await client.delete(f"{url}?purge=true", headers=bob),
        await client.get("/v1/memories?namespace=private", headers=bob),
    ]
    for response in attempts:
        assert response.status_code == 404, response.text
        assert "alice" not in response.text

    bob_list = (
        await client.get("/v1/memories?include_deleted=true&include_sensitive=true", headers=bob)
    ).json()
    assert bob_list["items"] == []
    assert (await client.get("/v1/namespaces", headers=bob)).json() == []

    # a same-named namespace of bob's is a different store
    mine = await client.post(
        "/v1/memories", json={"content": "alice's secret plan", "namespace": "private"}, headers=bob
    )
    assert mine.status_code == 201 and mine.json()["id"] != memory_id

    intact = (await client.get(url, headers=alice)).json()
    assert intact["content"] == "alice's secret plan" and intact["deleted_at"] is None
    alice_ids = [m["id"] for m in (await client.get("/v1/memories", headers=alice)).json()["items"]]
    assert alice_ids == [memory_id]
