"""Promotion: an episode (a captured exchange) becomes a curated memory that never expires.

`POST /v1/memories/{id}/promote` through the real app, and `memoria promote` against a real server.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import asyncpg
import httpx
import pytest
from click.testing import CliRunner, Result
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.cli import main
from tests.test_hook_command import Memoria, start_memoria
from tests.test_shares import share, user_key

Client = AsyncTestClient[Litestar]
Headers = dict[str, str]
EXCHANGE = {
    "session_id": "s-9",
    "turn": 4,
    "prompt": "Which queue does the billing worker read?",
    "reply": "The billing worker reads the invoices queue on RabbitMQ.",
}


async def capture_one(client: Client, headers: Headers, namespace: str = "default") -> Any:
    response = await client.post(
        "/v1/capture/claude-code",
        json={"exchanges": [EXCHANGE]},
        params={"namespace": namespace},
        headers=headers,
    )
    assert response.status_code == 200, response.text
    return response.json()["results"][0]


async def promote(client: Client, headers: Headers, memory_id: int, **body: Any) -> Any:
    return await client.post(f"/v1/memories/{memory_id}/promote", json=body, headers=headers)


async def test_a_promoted_episode_is_curated_never_expires_and_is_not_captured_again(
    client: Client, alice: Headers, conn: asyncpg.Connection
) -> None:
    captured = await capture_one(client, alice)
    (episode,) = captured["ids"]
    response = await promote(client, alice, episode)
    assert response.status_code == 200, response.text
    memory = response.json()
    assert (memory["id"], memory["kind"], memory["expires_at"]) == (episode, "memory", None)
    assert memory["importance"] == 0.5, "an episode's 0.2 becomes at least 0.5"
    assert memory["pinned"] is False and memory["tags"] == ["claude-code"]
    key = await conn.fetchval("SELECT capture_key FROM memories WHERE public_id = $1", episode)
    assert key == "claude-code:s-9:4:0", "the capture key stays"
    again = await capture_one(client, alice)
    assert again == {**captured, "duplicate": True}
    listed = (await client.get("/v1/memories", params={"kind": "episode"}, headers=alice)).json()["items"]
    assert listed == []


async def test_promote_sets_the_importance_pin_category_and_tags_given(
    client: Client, alice: Headers
) -> None:
    (episode,) = (await capture_one(client, alice))["ids"]
    response = await promote(
        client, alice, episode, importance=0.9, pinned=True, category="decision", tags=["billing", "queues"]
    )
    assert response.status_code == 200, response.text
    memory = response.json()
    assert abs(memory["importance"] - 0.9) < 1e-6
    assert (memory["pinned"], memory["category"], memory["tags"]) == (True, "decision", ["billing", "queues"])
    assert memory["kind"] == "memory"


async def test_promoting_a_curated_memory_changes_only_what_is_given(client: Client, alice: Headers) -> None:
    stored = await client.post(
        "/v1/memories", json={"content": "Invoices are kept seven years.", "importance": 0.3}, headers=alice
    )
    memory_id = stored.json()["id"]
    unchanged = (await promote(client, alice, memory_id)).json()
    assert (unchanged["kind"], unchanged["pinned"]) == ("memory", False)
    assert unchanged["importance"] == pytest.approx(0.3), "not raised to 0.5: it is no episode"
    pinned = (await promote(client, alice, memory_id, pinned=True)).json()
    assert pinned["importance"] == pytest.approx(0.3) and pinned["pinned"] is True


async def test_promote_answers_404_for_others_403_for_a_read_share_and_422_for_bad_bodies(
    client: Client, conn: asyncpg.Connection
) -> None:
    owner, grantee = await user_key(conn, "alice"), await user_key(conn, "bob")
    (episode,) = (await capture_one(client, owner, "shop"))["ids"]
    assert (await promote(client, grantee, episode)).status_code == 404
    assert (await share(client, owner, "shop", "bob", "read")).status_code == 201
    assert (await promote(client, grantee, episode)).status_code == 403
    for body in ({"importance": 2}, {"pinned": "yes"}, {"kind": "memory"}, {"tags": ["x" * 65]}):
        response = await promote(client, owner, episode, **body)
        assert response.status_code in (400, 422), (body, response.text)
    assert (await client.post("/v1/memories/1/promote", json={}, headers=owner)).status_code == 404
    assert (await client.post(f"/v1/memories/{episode}/promote", headers=owner)).status_code == 400
    row = await conn.fetchrow("SELECT kind, expires_at FROM memories WHERE public_id = $1", episode)
    assert row["kind"] == "episode" and row["expires_at"] is not None, "nothing refused changed it"

    assert (await share(client, owner, "shop", "bob", "write")).status_code in (200, 201)
    promoted = await promote(client, grantee, episode)
    assert promoted.status_code == 200 and promoted.json()["namespace"] == "@alice/shop"


# --- the command -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def memoria(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memoria]:
    with start_memoria(tmp_path_factory.mktemp("promote-e2e")) as running:
        yield running


def run(memoria: Memoria, *args: str) -> Result:
    env = {
        "MEMORIA_CLIENT__URL": memoria.url,
        "MEMORIA_CLIENT__API_KEY": memoria.key,
        "MEMORIA_CLIENT__TIMEOUT_S": "120",
        "COLUMNS": "250",
    }
    return CliRunner().invoke(main, list(args), env=env)


@pytest.mark.e2e
def test_memoria_promote_keeps_an_episode_pinned_with_the_importance_given(memoria: Memoria) -> None:
    headers = {"Authorization": f"Bearer {memoria.key}"}
    captured = httpx.post(
        f"{memoria.url}/v1/capture/claude-code",
        json={"exchanges": [EXCHANGE]},
        params={"namespace": "cli-promote"},
        headers=headers,
        timeout=60,
    )
    assert captured.status_code == 200, captured.text
    (episode,) = captured.json()["results"][0]["ids"]

    result = run(memoria, "promote", str(episode), "--importance", "0.8", "--pin")
    assert result.exit_code == 0, result.output
    assert (
        result.output.strip() == f"promoted #{episode} in cli-promote: importance 0.80, pinned, never expires"
    )
    memory = httpx.get(f"{memoria.url}/v1/memories/{episode}", headers=headers, timeout=60).json()
    assert (memory["kind"], memory["pinned"], memory["expires_at"]) == ("memory", True, None)
    assert abs(memory["importance"] - 0.8) < 1e-6

    missing = run(memoria, "promote", "1")
    assert missing.exit_code == 1 and "no memory #1" in missing.output
    bad = run(memoria, "promote", str(episode), "--importance", "1.5")
    assert bad.exit_code == 2, bad.output
