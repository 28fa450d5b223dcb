"""`POST /v1/capture/claude-code`: a Claude Code session's exchanges stored as episodes.

Through the real app and database: what an episode holds (text, digest, source metadata, the
transcript's time), idempotency on `<session>:<turn>:<chunk>` (a batch sent again, overlapping
batches, an exchange its owner deleted), chunking, private spans and credentials kept out, capture
switched off, bad bodies answered 4xx, and namespaces: shares and other users.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.capture.settings import CaptureSettings
from app.capture.text import chunk, strip_private
from app.embeddings import LocalEmbedder
from app.embeddings.backfill import EMBED_JOB
from app.factory import create_app
from app.jobs import JobSettings, JobWorker
from app.memories.expiry import EXPIRE_JOB
from app.settings import Settings
from tests.conftest import Keys
from tests.ids import internal_id
from tests.test_shares import share, user_key

Client = AsyncTestClient[Litestar]
Headers = dict[str, str]
ROUTE = "/v1/capture/claude-code"
GITHUB = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AWS_ID = "AKIAQ3EGRZ7WXMPLT4NV"
NO_WORKERS = JobSettings(workers=0)
"""Jobs run only when a test drains them: what is queued after a capture is then observable."""


def exchange(turn: int, session: str = "s-1", **fields: Any) -> dict[str, Any]:
    return {
        "session_id": session,
        "turn": turn,
        "prompt": f"How do we deploy service number {turn}?",
        "reply": f"Service {turn} deploys with Terraform from the infra repository.",
        **fields,
    }


@asynccontextmanager
async def running(settings: Settings, embedder: LocalEmbedder, **sections: Any) -> AsyncIterator[Client]:
    """The app with these settings sections replaced and no job loops (tests drain the queue)."""
    changed = settings.model_copy(update={"jobs": NO_WORKERS, **sections})
    async with AsyncTestClient(app=create_app(changed, embedder=embedder)) as client:
        yield client


async def drain(client: Client) -> None:
    jobs: JobWorker = client.app.state.jobs
    await asyncio.to_thread(lambda: client.blocking_portal.call(jobs.run_pending))


async def capture(
    client: Client, headers: Headers, exchanges: list[dict[str, Any]], namespace: str | None = None
) -> Any:
    params = {"namespace": namespace} if namespace is not None else None
    response = await client.post(ROUTE, json={"exchanges": exchanges}, params=params, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


async def read(client: Client, headers: Headers, memory_id: int) -> Any:
    response = await client.get(f"/v1/memories/{memory_id}", headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


async def everything_stored(conn: asyncpg.Connection) -> str:
    """Every text the memories table holds, in one string (deleted rows too)."""
    rows = await conn.fetch(
        "SELECT content, coalesce(category, ''), array_to_string(tags, ' '), coalesce(source, ''),"
        " metadata::text, coalesce(capture_key, '') FROM memories"
    )
    return "\n".join(" ".join(str(value) for value in row) for row in rows)


async def test_exchanges_become_episodes_with_their_digest_source_metadata_and_transcript_time(
    settings: Settings, embedder: LocalEmbedder, alice: Headers, conn: asyncpg.Connection
) -> None:
    started = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
    first = exchange(
        0,
        started_at="2026-03-01T09:30:00Z",
        ended_at="2026-03-01T09:31:00Z",
        cwd="/home/dev/shop",
        git_branch="main",
        hook_event="Stop",
        digest={"files_touched": ["infra/main.tf"], "commands": ["terraform plan"], "errors": ["exit 1"]},
    )
    async with running(settings, embedder) as client:
        answer = await capture(client, alice, [first, exchange(1)], namespace="repo:shop")
        assert {k: answer[k] for k in ("stored", "duplicates", "skipped")} == {
            "stored": 2,
            "duplicates": 0,
            "skipped": 0,
        }
        assert [(r["session_id"], r["turn"], r["duplicate"], len(r["ids"])) for r in answer["results"]] == [
            ("s-1", 0, False, 1),
            ("s-1", 1, False, 1),
        ]
        memory = await read(client, alice, answer["results"][0]["ids"][0])
        assert memory["content"] == (
            "User: How do we deploy service number 0?\n\n"
            "Assistant: Service 0 deploys with Terraform from the infra repository.\n\n"
            "Tools: files touched infra/main.tf; commands terraform plan; errors exit 1"
        )
        assert memory["kind"] == "episode" and memory["pinned"] is False
        assert memory["namespace"] == "repo:shop"
        assert memory["source"] == "claude-code" and memory["tags"] == ["claude-code"]
        assert memory["category"] is None and abs(memory["importance"] - 0.2) < 1e-6
        assert datetime.fromisoformat(memory["created_at"]) == started
        expires = datetime.fromisoformat(memory["expires_at"])
        assert abs(expires - (datetime.now(UTC) + timedelta(days=30))) < timedelta(minutes=5)
        assert memory["metadata"] == {
            "session_id": "s-1",
            "turn": 0,
            "chunk": 0,
            "chunks": 1,
            "cwd": "/home/dev/shop",
            "git_branch": "main",
            "started_at": "2026-03-01T09:30:00+00:00",
            "ended_at": "2026-03-01T09:31:00+00:00",
            "hook_event": "Stop",
            "files_touched": ["infra/main.tf"],
            "files_read": [],
            "commands": ["terraform plan"],
            "errors": ["exit 1"],
            "subagents": [],
        }
        # the request did not embed: the durable embedding job does, after the answer
        assert memory["embedding_model"] is None
        internal = await internal_id(conn, memory["id"])
        kinds = {r["kind"] for r in await conn.fetch("SELECT kind FROM jobs WHERE memory_id = $1", internal)}
        assert EMBED_JOB in kinds
        assert await conn.fetchval("SELECT count(*) FROM jobs WHERE kind = $1", EXPIRE_JOB) == 1
        await drain(client)
        assert (await read(client, alice, memory["id"]))["embedding_model"] == "all-MiniLM-L6-v2"
        key = await conn.fetchval("SELECT capture_key FROM memories WHERE id = $1", internal)
        assert key == "claude-code:s-1:0:0"


async def test_sending_exchanges_again_stores_nothing_twice_even_in_overlapping_batches(
    client: Client, alice: Headers, conn: asyncpg.Connection
) -> None:
    first = await capture(client, alice, [exchange(0), exchange(1)])
    again = await capture(client, alice, [exchange(0), exchange(1)])
    assert (again["stored"], again["duplicates"]) == (0, 2)
    assert [r["ids"] for r in again["results"]] == [r["ids"] for r in first["results"]]
    assert all(r["duplicate"] for r in again["results"])

    overlapping = await capture(client, alice, [exchange(1), exchange(2), exchange(2)])
    assert (overlapping["stored"], overlapping["duplicates"]) == (1, 2)
    assert [r["duplicate"] for r in overlapping["results"]] == [True, False, True]
    assert overlapping["results"][1]["ids"] == overlapping["results"][2]["ids"]
    assert await conn.fetchval("SELECT count(*) FROM memories") == 3

    # an exchange its owner deleted is not captured again by the next flush
    forgotten = first["results"][0]["ids"][0]
    assert (await client.delete(f"/v1/memories/{forgotten}", headers=alice)).status_code == 204
    after_delete = await capture(client, alice, [exchange(0)])
    assert after_delete["results"][0] == {
        "session_id": "s-1",
        "turn": 0,
        "ids": [forgotten],
        "duplicate": True,
        "folded": False,
    }
    assert await conn.fetchval("SELECT count(*) FROM memories") == 3


async def test_a_long_exchange_is_chunked_under_the_cap_at_paragraph_breaks(
    settings: Settings, embedder: LocalEmbedder, alice: Headers
) -> None:
    paragraphs = [f"Paragraph {i}: " + " ".join(f"word{i}x{j}" for j in range(30)) for i in range(12)]
    long = exchange(0, reply="\n\n".join(paragraphs))
    async with running(settings, embedder, capture=CaptureSettings(max_chunk_chars=600)) as client:
        answer = await capture(client, alice, [long])
        ids = answer["results"][0]["ids"]
        assert len(ids) > 1 and answer["stored"] == 1
        chunks = [await read(client, alice, memory_id) for memory_id in ids]
        again = await capture(client, alice, [long])
    assert again["results"][0] == {**answer["results"][0], "duplicate": True}, "same chunks, same keys"
    assert all(len(c["content"]) <= 600 for c in chunks)
    assert [c["metadata"]["chunk"] for c in chunks] == list(range(len(ids)))
    assert {c["metadata"]["chunks"] for c in chunks} == {len(ids)}
    # cut between paragraphs, never inside one: each paragraph is whole in exactly one chunk
    for paragraph in paragraphs:
        assert sum(paragraph in c["content"] for c in chunks) == 1, paragraph
    assert chunks[0]["content"].startswith("User: How do we deploy")


async def test_private_spans_never_reach_the_database(
    client: Client, alice: Headers, conn: asyncpg.Connection
) -> None:
    answer = await capture(
        client,
        alice,
        [
            exchange(0, prompt="Deploy it <private>my bank PIN is 4242</private> please"),
            exchange(
                1,
                prompt="Check the logs <PRIVATE>\nthe password hint is falcon\n",
                reply="The logs show the worker restarting every night.",
            ),
            exchange(2, prompt="<private>only this</private>", reply=""),
        ],
    )
    assert (answer["stored"], answer["skipped"]) == (2, 1), "nothing left of turn 2: skipped"
    stored = await everything_stored(conn)
    assert "4242" not in stored and "falcon" not in stored and "only this" not in stored
    assert "private" not in stored.lower()
    memory = await read(client, alice, answer["results"][0]["ids"][0])
    assert memory["content"].startswith("User: Deploy it  please")


async def test_credentials_anywhere_in_a_capture_are_redacted(
    client: Client, alice: Headers, conn: asyncpg.Connection
) -> None:
    answer = await capture(
        client,
        alice,
        [
            exchange(
                0,
                prompt=f"Use token {GITHUB} for the release",
                cwd=f"/tmp/{AWS_ID}",
                digest={"commands": [f"export GH_TOKEN={GITHUB}"], "errors": [f"bad key {AWS_ID}"]},
            )
        ],
    )
    assert answer["stored"] == 1
    stored = await everything_stored(conn)
    assert GITHUB not in stored and AWS_ID not in stored
    memory = await read(client, alice, answer["results"][0]["ids"][0])
    assert "[secret:github-token#1]" in memory["content"] and memory["has_secrets"] is True


async def test_with_capture_disabled_nothing_is_stored(
    settings: Settings, embedder: LocalEmbedder, alice: Headers, conn: asyncpg.Connection
) -> None:
    async with running(settings, embedder, capture=CaptureSettings(enabled=False)) as client:
        answer = await capture(client, alice, [exchange(0), exchange(1)])
    assert answer == {
        "stored": 0,
        "duplicates": 0,
        "folded": 0,
        "skipped": 2,
        "skipped_reasons": {"disabled": 2},
        "results": [],
    }
    assert await conn.fetchval("SELECT count(*) FROM memories") == 0


@pytest.mark.parametrize(
    "body",
    [
        {"exchanges": []},
        {"exchanges": [exchange(0, unknown=1)]},
        {"exchanges": [exchange(-1)]},
        {"exchanges": [exchange(0, session="")]},
        {"exchanges": [exchange(0, session="s\x00")]},
        {"exchanges": [exchange(0, started_at="yesterday")]},
        {"exchanges": [exchange(0, started_at="0001-01-01T00:00:00+14:00")]},
        {"exchanges": [exchange(0, digest={"commands": ["ls"] * 51})]},
        {"exchanges": [exchange(0, digest={"commands": ["x" * 501]})]},
        {"exchanges": [exchange(0, prompt="x" * 100_001)]},
        {"exchanges": [exchange(i) for i in range(201)]},
        {"exchanges": "none"},
        {},
    ],
)
async def test_bad_capture_bodies_answer_4xx_and_store_nothing(
    client: Client, alice: Headers, conn: asyncpg.Connection, body: dict[str, Any]
) -> None:
    response = await client.post(ROUTE, json=body, headers=alice)
    assert 400 <= response.status_code < 500, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert await conn.fetchval("SELECT count(*) FROM memories") == 0


async def test_a_bad_namespace_answers_4xx(client: Client, alice: Headers) -> None:
    for namespace in ("@@", "-starts-with-a-dash", "@bob/never-shared"):
        response = await client.post(
            ROUTE, json={"exchanges": [exchange(0)]}, params={"namespace": namespace}, headers=alice
        )
        assert response.status_code in (403, 404, 422), (namespace, response.text)


async def test_a_read_share_refuses_capture_and_a_write_share_stores_in_the_owners_namespace(
    client: Client, conn: asyncpg.Connection
) -> None:
    owner, grantee = await user_key(conn, "alice"), await user_key(conn, "bob")
    await capture(client, owner, [exchange(0)], namespace="shop")
    assert (await share(client, owner, "shop", "bob", "read")).status_code == 201
    refused = await client.post(
        ROUTE, json={"exchanges": [exchange(1)]}, params={"namespace": "@alice/shop"}, headers=grantee
    )
    assert refused.status_code == 403, refused.text
    assert await conn.fetchval("SELECT count(*) FROM memories") == 1

    assert (await share(client, owner, "shop", "bob", "write")).status_code in (200, 201)
    stored = await capture(client, grantee, [exchange(0), exchange(1)], namespace="@alice/shop")
    assert (stored["stored"], stored["duplicates"]) == (1, 1), "turn 0 is in alice's namespace already"
    seen_by_owner = await read(client, owner, stored["results"][1]["ids"][0])
    assert seen_by_owner["namespace"] == "shop" and seen_by_owner["kind"] == "episode"


async def test_users_capture_the_same_session_apart_and_never_see_each_others_episodes(
    client: Client, keys: Keys, conn: asyncpg.Connection
) -> None:
    alice, bob = await keys.new("alice"), await keys.new("bob")
    alices = await capture(client, alice, [exchange(0)])
    bobs = await capture(client, bob, [exchange(0)])
    assert not bobs["results"][0]["duplicate"], "the key is unique per namespace, not globally"
    assert alices["results"][0]["ids"] != bobs["results"][0]["ids"]
    response = await client.get(f"/v1/memories/{alices['results'][0]['ids'][0]}", headers=bob)
    assert response.status_code == 404
    listed = (await client.get("/v1/memories", params={"kind": "episode"}, headers=bob)).json()["items"]
    assert [m["id"] for m in listed] == bobs["results"][0]["ids"]


async def test_a_capture_needs_the_write_scope(client: Client, conn: asyncpg.Connection, keys: Keys) -> None:
    headers = await keys.new("reader")
    await conn.execute("UPDATE api_keys SET scopes = '{read}'")
    response = await client.post(ROUTE, json={"exchanges": [exchange(0)]}, headers=headers)
    assert response.status_code == 403, response.text
    assert await conn.fetchval("SELECT count(*) FROM memories") == 0


async def test_a_full_batch_of_exchanges_is_stored_in_one_request(
    client: Client, alice: Headers, conn: asyncpg.Connection
) -> None:
    batch = [exchange(turn, digest={"files_read": [f"src/module_{turn}.py"]}) for turn in range(200)]
    answer = await capture(client, alice, batch)
    assert (answer["stored"], answer["duplicates"], answer["skipped"]) == (200, 0, 0)
    assert await conn.fetchval("SELECT count(*) FROM memories WHERE kind = 'episode'") == 200
    keys = await conn.fetchval("SELECT count(DISTINCT capture_key) FROM memories")
    assert keys == 200


def test_chunks_cut_at_a_line_then_a_word_then_hard_and_always_the_same_way() -> None:
    lines = "\n".join(f"line {i} " + "x" * 30 for i in range(6))
    by_line = chunk(lines, 100)
    assert all(len(piece) <= 100 for piece in by_line)
    assert all(piece.startswith("line ") and piece.endswith("x") for piece in by_line), by_line
    words = " ".join(f"w{i:03d}" for i in range(60))
    by_word = chunk(words, 50)
    assert all(len(piece) <= 50 and not piece.startswith(" ") for piece in by_word)
    assert " ".join(by_word) == words, "cut between words, none lost"
    assert chunk("y" * 120, 50) == ["y" * 50, "y" * 50, "y" * 20]
    assert chunk(lines, 100) == by_line and chunk("  short  ", 50) == ["short"]


def test_private_spans_go_in_any_case_across_lines_and_an_unclosed_one_takes_the_rest() -> None:
    assert strip_private("a <private>x</private> b <Private>\ny\n</PRIVATE > c") == "a  b  c"
    assert strip_private("keep this <private>but not\nthis, nor what follows") == "keep this "
    assert strip_private("a stray </private> closing tag") == "a stray  closing tag"
    assert strip_private("no tags at all") == "no tags at all"
