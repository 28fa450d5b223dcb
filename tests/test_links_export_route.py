"""GET /v1/links: the links an export writes beside the memories, exactly those between memories
`GET /v1/memories` lists for the same namespaces, and none of another tenant's."""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient

Client = AsyncTestClient[Litestar]


async def store(client: Client, headers: dict[str, str], content: str, **fields: Any) -> int:
    answer = await client.post("/v1/memories", json={"content": content, **fields}, headers=headers)
    assert answer.status_code == 201, answer.text
    return int(answer.json()["id"])


async def link(client: Client, headers: dict[str, str], source: int, kind: str, target: int) -> None:
    answer = await client.post(
        f"/v1/memories/{source}/links", json={"kind": kind, "target": target}, headers=headers
    )
    assert answer.status_code == 201, answer.text


async def links(client: Client, headers: dict[str, str], **params: Any) -> list[tuple[int, str, int]]:
    answer = await client.get("/v1/links", params=params, headers=headers)
    assert answer.status_code == 200, answer.text
    return [(x["source"], x["kind"], x["target"]) for x in answer.json()]


async def test_the_links_among_the_exported_memories_oldest_first(
    client: Client, alice: dict[str, str], bob: dict[str, str]
) -> None:
    old = await store(client, alice, "Deploys go out on Tuesdays", namespace="ops")
    new = await store(client, alice, "Deploys go out on Thursdays", namespace="ops", supersedes=[old])
    secret = await store(client, alice, "The deploy key rotates monthly", namespace="ops", is_sensitive=True)
    await link(client, alice, new, "see-also", secret)
    other = await store(client, alice, "Lint runs in CI", namespace="dev")
    other_fix = await store(client, alice, "Lint fixes go in their own commit", namespace="dev")
    await link(client, alice, other, "see-also", other_fix)
    gone = await store(client, alice, "Deploys need a ticket", namespace="ops")
    await link(client, alice, gone, "part-of", new)
    assert (await client.delete(f"/v1/memories/{gone}", headers=alice)).status_code == 204

    assert await links(client, alice, namespace="ops") == [(new, "supersedes", old)]
    assert await links(client, alice, namespace="ops", include_sensitive="true") == [
        (new, "supersedes", old),
        (new, "see-also", secret),
    ]
    assert await links(client, alice) == [(new, "supersedes", old), (other, "see-also", other_fix)]
    # Bob's namespace of the same name is his own, empty of links; Alice's he cannot name
    await store(client, bob, "Bob deploys on Mondays", namespace="ops")
    assert await links(client, bob, namespace="ops") == []
    assert (await client.get("/v1/links", params={"namespace": "@alice/ops"}, headers=bob)).status_code == 404


async def test_a_bad_or_unknown_namespace_is_a_4xx_problem(client: Client, alice: dict[str, str]) -> None:
    unknown = await client.get("/v1/links", params={"namespace": "never-made"}, headers=alice)
    assert unknown.status_code == 404 and "never-made" in unknown.json()["detail"]
    for bad in ("", " ", "x" * 500, "@", "@nobody/x"):
        answer = await client.get("/v1/links", params={"namespace": bad}, headers=alice)
        assert 400 <= answer.status_code < 500, (bad, answer.status_code, answer.text)
    assert (await client.get("/v1/links")).status_code == 401
