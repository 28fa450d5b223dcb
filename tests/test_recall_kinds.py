"""Recall knows episodes: `filters.kinds` narrows every leg, each hit and its explanation name the
kind, and recalling an episode pushes back its expiry (at most once a day).

Episodes are made the way capture leaves them in the table: stored, then turned into
`kind = 'episode'` with an `expires_at` (the capture route is tested on its own).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.jobs import JobWorker

Client = AsyncTestClient[Litestar]

NAMESPACE = "kinds"
CURATED = [
    "Zephyr deploys the billing service with Terraform from the release branch.",
    "Zephyr owns the billing database migrations and reviews every schema change.",
]
EPISODES = [
    "User: how does Zephyr deploy billing?\n\nAssistant: Zephyr runs terraform apply for billing.",
    "User: the Zephyr billing migration failed\n\nAssistant: rerun the Zephyr migration after the lock.",
]
QUERY = "How does Zephyr deploy the billing service?"

ALL_LEGS: dict[str, float] = {}
LEXICAL = {"dense": 0.0, "graph": 0.0}
DENSE = {"lexical": 0.0, "graph": 0.0}
GRAPH = {"lexical": 0.0, "dense": 0.0}


async def drain(client: Client) -> None:
    """Run the jobs stores left behind (concept indexing, for the graph leg) on the app's own loop."""
    jobs: JobWorker = client.app.state.jobs
    await asyncio.to_thread(lambda: client.blocking_portal.call(jobs.run_pending))


async def seed(
    client: Client,
    headers: dict[str, str],
    conn: asyncpg.Connection,
    expires_in: timedelta = timedelta(days=2),
) -> tuple[set[int], set[int]]:
    """(curated ids, episode ids): all stored, then the episodes turned into captured ones."""
    body = [{"content": text, "namespace": NAMESPACE} for text in CURATED + EPISODES]
    response = await client.post("/v1/memories", json=body, headers=headers)
    assert response.status_code == 201, response.text
    ids = [r["id"] for r in response.json()["results"]]
    await drain(client)
    curated, episodes = ids[: len(CURATED)], ids[len(CURATED) :]
    await conn.execute(
        "UPDATE memories SET kind = 'episode', importance = 0.2, expires_at = $2 WHERE public_id = ANY($1)",
        episodes,
        datetime.now(UTC) + expires_in,
    )
    return set(curated), set(episodes)


async def recall(client: Client, headers: dict[str, str], **body: Any) -> list[dict[str, Any]]:
    response = await client.post(
        "/v1/recall", json={"query": QUERY, "namespace": NAMESPACE, **body}, headers=headers
    )
    assert response.status_code == 200, response.text
    hits: list[dict[str, Any]] = response.json()["results"]
    return hits


async def expiries(conn: asyncpg.Connection, ids: set[int]) -> dict[int, datetime]:
    rows = await conn.fetch("SELECT public_id, expires_at FROM memories WHERE public_id = ANY($1)", list(ids))
    return {row["public_id"]: row["expires_at"] for row in rows}


@pytest.mark.parametrize(
    "weights", [ALL_LEGS, LEXICAL, DENSE, GRAPH], ids=["all", "lexical", "dense", "graph"]
)
async def test_the_kinds_filter_holds_in_every_leg(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection, weights: dict[str, float]
) -> None:
    curated, episodes = await seed(client, alice, conn)
    both = await recall(client, alice, weights=weights)
    assert {hit["id"] for hit in both} == curated | episodes
    assert {hit["id"]: hit["kind"] for hit in both} == dict.fromkeys(curated, "memory") | dict.fromkeys(
        episodes, "episode"
    )
    only_episodes = await recall(client, alice, weights=weights, filters={"kinds": ["episode"]})
    assert {hit["id"] for hit in only_episodes} == episodes
    only_curated = await recall(client, alice, weights=weights, filters={"kinds": ["memory"]})
    assert {hit["id"] for hit in only_curated} == curated
    named_both = await recall(client, alice, weights=weights, filters={"kinds": ["episode", "memory"]})
    assert {hit["id"] for hit in named_both} == curated | episodes


async def test_explain_names_each_hits_kind(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    curated, episodes = await seed(client, alice, conn)
    hits = await recall(client, alice, explain=True)
    assert {hit["id"]: hit["explain"]["kind"] for hit in hits} == dict.fromkeys(
        curated, "memory"
    ) | dict.fromkeys(episodes, "episode")


@pytest.mark.parametrize(
    "kinds",
    [[], ["memory", "memory"], ["summary"], ["episode", "episode"], "episode", [None]],
    ids=["empty", "duplicate-memory", "unknown", "duplicate-episode", "not-a-list", "null-item"],
)
async def test_bad_kinds_are_a_422_naming_the_field(
    client: Client, alice: dict[str, str], kinds: Any
) -> None:
    """Like every other body field the API refuses: a 422 problem pointing at `filters.kinds`."""
    response = await client.post(
        "/v1/recall",
        json={"query": QUERY, "namespace": NAMESPACE, "filters": {"kinds": kinds}},
        headers=alice,
    )
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert "kinds" in response.text


async def test_recalling_an_episode_pushes_its_expiry_back_to_a_full_ttl(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    """The app's TTL is the default 30 days: an episode two days from expiry that a recall returns
    lives 30 days from now again; the curated memories beside it keep no expiry."""
    curated, episodes = await seed(client, alice, conn, expires_in=timedelta(days=2))
    before = datetime.now(UTC)
    hits = await recall(client, alice, filters={"kinds": ["episode"]})
    assert {hit["id"] for hit in hits} == episodes
    for expires_at in (await expiries(conn, episodes)).values():
        assert before + timedelta(days=30) - timedelta(minutes=1) <= expires_at
        assert expires_at <= datetime.now(UTC) + timedelta(days=30)
    assert set((await expiries(conn, curated)).values()) == {None}


async def test_an_episode_recalled_again_within_a_day_is_not_written_again(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    """The push-back is throttled: an expiry more than TTL less a day away is left exactly as it is,
    so a hot episode costs one write a day, not one per recall."""
    _, episodes = await seed(client, alice, conn, expires_in=timedelta(days=29, hours=12))
    written = await expiries(conn, episodes)
    await recall(client, alice)
    await recall(client, alice, filters={"kinds": ["episode"]})
    assert await expiries(conn, episodes) == written


async def test_an_episode_not_returned_keeps_its_expiry(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    _, episodes = await seed(client, alice, conn, expires_in=timedelta(days=2))
    written = await expiries(conn, episodes)
    hits = await recall(client, alice, filters={"kinds": ["memory"]})
    assert hits and all(hit["kind"] == "memory" for hit in hits)
    assert await expiries(conn, episodes) == written
