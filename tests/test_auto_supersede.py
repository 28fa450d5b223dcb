"""The automatic supersede end to end: a memory stored over REST that restates an older one with
different specifics supersedes it (an `auto` link with its reason, the old one out of recall); one
the rule is not sure of is offered in the store's answer (and the MCP tool's text); the setting
turns it off; a captured episode is judged when its embedding job gives it a vector."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.embeddings import LocalEmbedder
from app.factory import create_app
from app.jobs import JobSettings, JobWorker
from app.links.settings import LinkSettings
from app.mcp.render import stored_text
from app.memories.schemas import StoreResult, SupersedeSuggestion
from app.settings import Settings

Client = AsyncTestClient[Litestar]

OLD = "The staging database runs in eu-west-1."
NEW = "The staging database now runs in eu-central-1."


async def store(client: Client, headers: dict[str, str], content: str, **fields: Any) -> dict[str, Any]:
    answer = await client.post("/v1/memories", json={"content": content, **fields}, headers=headers)
    assert answer.status_code == 201, answer.text
    result: dict[str, Any] = answer.json()
    return result


async def recalled(client: Client, headers: dict[str, str], query: str) -> list[int]:
    answer = await client.post("/v1/recall", json={"query": query}, headers=headers)
    assert answer.status_code == 200, answer.text
    return [hit["id"] for hit in answer.json()["results"]]


async def test_a_changed_fact_supersedes_the_old_one_with_an_auto_link_and_its_reason(
    client: Client, alice: dict[str, str]
) -> None:
    old = (await store(client, alice, OLD))["id"]
    stored = await store(client, alice, NEW)
    new = stored["id"]

    assert stored["superseded"] == [old]
    assert stored["supersede_suggestions"] == []
    links = (await client.get(f"/v1/memories/{old}/links", headers=alice)).json()
    assert links["superseded_by"] == new
    (made,) = links["links"]
    assert (made["kind"], made["direction"], made["memory"]["id"], made["origin"]) == (
        "supersedes",
        "in",
        new,
        "auto",
    )
    assert "eu-west-1 \u2192 eu-central-1" in made["reason"]
    hits = await recalled(client, alice, "Which region does the staging database run in?")
    assert new in hits
    assert old not in hits


async def test_in_a_batch_a_fact_superseded_by_one_memory_is_not_a_candidate_of_the_next(
    client: Client, alice: dict[str, str]
) -> None:
    # the batch's candidates are read at once; the first link makes them stale for the rest
    old = (await store(client, alice, OLD))["id"]
    batch = [{"content": NEW}, {"content": "The staging database now runs in us-east-1."}]
    answer = await client.post("/v1/memories", json=batch, headers=alice)
    assert answer.status_code == 201, answer.text
    first, second = answer.json()["results"]
    assert first["superseded"] == [old]
    assert second["superseded"] == []
    assert old not in [s["id"] for s in second["supersede_suggestions"]]
    links = (await client.get(f"/v1/memories/{old}/links", headers=alice)).json()
    assert links["superseded_by"] == first["id"]


async def test_an_automatic_supersede_is_undone_like_any_link(client: Client, alice: dict[str, str]) -> None:
    old = (await store(client, alice, OLD))["id"]
    new = (await store(client, alice, NEW))["id"]

    undone = await client.delete(f"/v1/memories/{new}/links/supersedes/{old}", headers=alice)

    assert undone.status_code == 204, undone.text
    assert old in await recalled(client, alice, "staging database region")


async def test_a_doubtful_replacement_is_offered_in_the_answer_and_linked_to_nothing(
    client: Client, alice: dict[str, str]
) -> None:
    old = (await store(client, alice, "The public API rate limit is 100 requests per minute."))["id"]
    stored = await store(client, alice, "The internal API rate limit is 5000 requests per minute.")

    assert stored["superseded"] == []
    (offered,) = stored["supersede_suggestions"]
    assert offered["id"] == old
    assert offered["content"] == "The public API rate limit is 100 requests per minute."
    assert "100 \u2192 5000" in offered["reason"]
    assert (await client.get(f"/v1/memories/{old}/links", headers=alice)).json()["links"] == []


async def test_an_elaboration_supersedes_nothing_and_offers_nothing(
    client: Client, alice: dict[str, str]
) -> None:
    old = (await store(client, alice, OLD))["id"]
    stored = await store(client, alice, OLD[:-1] + " on an RDS db.t3.medium instance with Multi-AZ disabled.")

    assert (stored["superseded"], stored["supersede_suggestions"]) == ([], [])
    assert old in await recalled(client, alice, "staging database region")


async def test_a_memory_naming_what_it_supersedes_gets_no_automatic_link(
    client: Client, alice: dict[str, str]
) -> None:
    old = (await store(client, alice, OLD))["id"]
    other = (await store(client, alice, "The API listens on port 8080."))["id"]
    stored = await store(client, alice, NEW, supersedes=[other])

    assert stored["superseded"] == [other]
    assert (await client.get(f"/v1/memories/{old}/links", headers=alice)).json()["superseded_by"] is None


@pytest.fixture
async def client_without_auto_supersede(settings: Settings, embedder: LocalEmbedder) -> AsyncIterator[Client]:
    off = settings.model_copy(update={"links": LinkSettings(auto_supersede=False)})
    async with AsyncTestClient(app=create_app(off, embedder=embedder)) as test_client:
        yield test_client


async def test_the_setting_turns_the_automatic_supersede_off(
    client_without_auto_supersede: Client, alice: dict[str, str]
) -> None:
    client = client_without_auto_supersede
    old = (await store(client, alice, OLD))["id"]
    stored = await store(client, alice, NEW)

    assert (stored["superseded"], stored["supersede_suggestions"]) == ([], [])
    assert old in await recalled(client, alice, "staging database region")


def test_the_mcp_store_answer_says_what_was_superseded_and_what_looks_replaced() -> None:
    results = [
        StoreResult(id=12, namespace="default", duplicate=False, embedded=True, superseded=[7]),
        StoreResult(
            id=13,
            namespace="default",
            duplicate=False,
            embedded=True,
            supersede_suggestions=[
                SupersedeSuggestion(
                    id=9, content="The public API rate limit is 100.", reason="100 \u2192 5000"
                )
            ],
        ),
    ]

    text = stored_text(results)

    assert text.splitlines()[0] == "Stored 2: #12 ns:default (supersedes #7), #13 ns:default"
    assert (
        "#13 looks like it replaces #9 (\u201cThe public API rate limit is 100.\u201d): 100 \u2192 5000."
        in text
    )
    assert msgspec.json.decode(msgspec.json.encode(results[1]))["supersede_suggestions"][0]["id"] == 9


async def test_a_captured_episode_supersedes_an_older_one_once_it_is_embedded(
    settings: Settings, embedder: LocalEmbedder, alice: dict[str, str]
) -> None:
    said = datetime(2026, 11, 2, 10, tzinfo=UTC)
    exchanges = [
        {
            "session_id": "s-1",
            "turn": 1,
            "prompt": "Which region is the staging database in?",
            "reply": "The staging database runs in eu-west-1.",
            "started_at": said.isoformat(),
        },
        {
            "session_id": "s-2",
            "turn": 1,
            "prompt": "We moved the staging database last week. Where does it run now?",
            "reply": "The staging database now runs in eu-central-1.",
            "started_at": (said + timedelta(days=7)).isoformat(),
        },
    ]
    changed = settings.model_copy(update={"jobs": JobSettings(workers=0)})
    async with AsyncTestClient(app=create_app(changed, embedder=embedder)) as client:
        answer = await client.post("/v1/capture/claude-code", json={"exchanges": exchanges}, headers=alice)
        assert answer.status_code == 200, answer.text
        old, new = (r["ids"][0] for r in answer.json()["results"])
        # capture answers before any vector exists: the embedding job judges them
        assert (await client.get(f"/v1/memories/{old}/links", headers=alice)).json()["links"] == []
        jobs: JobWorker = client.app.state.jobs
        await asyncio.to_thread(lambda: client.blocking_portal.call(jobs.run_pending))

        links = (await client.get(f"/v1/memories/{old}/links", headers=alice)).json()
    assert links["superseded_by"] == new
    assert [(x["origin"], x["memory"]["id"]) for x in links["links"]] == [("auto", new)]
    assert "eu-west-1 \u2192 eu-central-1" in links["links"][0]["reason"]
