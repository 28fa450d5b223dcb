"""Context for short turns: a captured turn's vector is computed from its date and the start of the
previous turn of its session (app/embeddings/inputs.sql), while its content, its lexical search
text and what readers get stay the turn alone; the neighbour is only ever a live, non-sensitive
captured turn of the same namespace; every path that embeds (the job, backfill, reembed) computes
the same text, so re-embedding reproduces the vectors.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import numpy as np
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.embeddings import LocalEmbedder, guarded
from app.embeddings.backfill import backfill
from app.embeddings.inputs import TurnContext
from app.embeddings.jobs import connect
from app.embeddings.reembed import ReembedOptions, reembed
from app.factory import create_app
from app.jobs import JobSettings, JobWorker
from app.settings import Settings
from tests.fakes.embedders import ScriptedEmbedder
from tests.fakes.embedding_server import FakeEmbeddingServer
from tests.fakes.providers import openai_compatible

Client = AsyncTestClient[Litestar]
Headers = dict[str, str]
CONTEXT = TurnContext(previous_chars=40, with_date=True)
MARCH_4 = "2026-03-04T10:00:00Z"


@pytest.fixture
async def job_conn(db_url: str) -> AsyncIterator[asyncpg.Connection]:
    conn = await connect(db_url)
    yield conn
    await conn.close()


@pytest.fixture
def fake384() -> Iterator[FakeEmbeddingServer]:
    with FakeEmbeddingServer(dimension=384) as server:
        yield server


@asynccontextmanager
async def running(
    settings: Settings, embedder: ScriptedEmbedder, context: TurnContext = CONTEXT
) -> AsyncIterator[Client]:
    """The app with turn context `context` and no job loops (tests drain the queue)."""
    embeddings = settings.embeddings.model_copy(
        update={"turn_context_previous_chars": context.previous_chars, "turn_context_date": context.with_date}
    )
    changed = settings.model_copy(update={"jobs": JobSettings(workers=0), "embeddings": embeddings})
    async with AsyncTestClient(app=create_app(changed, embedder=embedder)) as client:
        yield client


async def drain(client: Client) -> None:
    jobs: JobWorker = client.app.state.jobs
    await asyncio.to_thread(lambda: client.blocking_portal.call(jobs.run_pending))


def exchange(session: str, turn: int, prompt: str, reply: str) -> dict[str, Any]:
    return {"session_id": session, "turn": turn, "prompt": prompt, "reply": reply, "started_at": MARCH_4}


async def capture(
    client: Client, headers: Headers, exchanges: list[dict[str, Any]], namespace: str | None = None
) -> list[int]:
    """Store `exchanges` through the capture route; the public id of each, in the order given."""
    query = f"?namespace={namespace}" if namespace else ""
    response = await client.post(
        f"/v1/capture/claude-code{query}", json={"exchanges": exchanges}, headers=headers
    )
    assert response.status_code == 200, response.text
    return [r["ids"][0] for r in response.json()["results"]]


async def memory(conn: asyncpg.Connection, public_id: int) -> asyncpg.Record:
    row = await conn.fetchrow(
        "SELECT content, search_vector::text AS search, embedding FROM memories WHERE public_id = $1",
        public_id,
    )
    assert row is not None
    return row


async def vector_of(embedder: ScriptedEmbedder, text: str) -> np.ndarray[Any, Any]:
    (vector,) = await embedder.model.embed_documents([text])
    return np.asarray(vector, dtype=np.float32)


def close(stored: Any, expected: np.ndarray[Any, Any]) -> bool:
    """A stored halfvec against a float vector: equal to half precision."""
    return bool(np.allclose(stored.to_numpy(), expected, atol=2e-3))


async def test_a_captured_turn_is_embedded_after_its_date_and_previous_turn_but_stored_and_shown_alone(
    settings: Settings, embedder: LocalEmbedder, job_conn: asyncpg.Connection, alice: Headers
) -> None:
    recording = ScriptedEmbedder(embedder)
    async with running(settings, recording) as client:
        # sent out of order in one batch: the session's order decides the neighbour, not arrival
        second, first = await capture(
            client,
            alice,
            [
                exchange("s-1", 1, "Which one did we pick?", "The second one, for its lower latency."),
                exchange("s-1", 0, "Compare pgbouncer and pgcat for pooling", "Both pool; pgcat shards."),
            ],
        )
        await drain(client)
        one, two = await memory(job_conn, first), await memory(job_conn, second)
        expected = f"4 March 2026\n{one['content'][:40]}…\n{two['content']}"
        assert expected in recording.documents, recording.documents
        assert f"4 March 2026\n{one['content']}" in recording.documents, "the first turn has no neighbour"
        assert close(two["embedding"], await vector_of(recording, expected))

        # the text, the lexical search text and what a reader gets are the turn alone
        assert "pgbouncer" not in two["content"] and "pgbouncer" not in two["search"]
        assert "march" not in two["search"] and "2026" not in two["search"]
        shown = await client.get(f"/v1/memories/{second}", headers=alice)
        assert shown.json()["content"] == two["content"]

        # a curated memory is embedded as its content, in the request, whatever its metadata says
        stored = await client.post(
            "/v1/memories",
            json={"content": "Use pgcat for sharded pools", "metadata": {"session_id": "s-1", "turn": 2}},
            headers=alice,
        )
        assert stored.json()["embedded"] is True
        assert recording.documents[-1] == "Use pgcat for sharded pools"

        # an edited turn is embedded again by the job, with its neighbourhood
        await client.patch(f"/v1/memories/{second}", json={"content": "We picked pgcat."}, headers=alice)
        await drain(client)
        assert recording.documents[-1] == f"4 March 2026\n{one['content'][:40]}…\nWe picked pgcat."
        edited = await memory(job_conn, second)
        assert close(edited["embedding"], await vector_of(recording, recording.documents[-1]))


async def test_turn_context_off_embeds_a_captured_turn_as_its_content(
    settings: Settings, embedder: LocalEmbedder, job_conn: asyncpg.Connection, alice: Headers
) -> None:
    recording = ScriptedEmbedder(embedder)
    async with running(settings, recording, TurnContext()) as client:
        recording.documents.clear()  # the start-up warm-up's text
        first, second = await capture(
            client,
            alice,
            [
                exchange("s-1", 0, "Compare pgbouncer and pgcat", "Both pool."),
                exchange("s-1", 1, "Which?", "pgcat."),
            ],
        )
        await drain(client)
    contents = [(await memory(job_conn, public_id))["content"] for public_id in (first, second)]
    assert sorted(recording.documents) == sorted(contents)


async def test_a_deleted_sensitive_or_other_namespace_turn_is_never_a_neighbour(
    settings: Settings, embedder: LocalEmbedder, job_conn: asyncpg.Connection, alice: Headers, bob: Headers
) -> None:
    recording = ScriptedEmbedder(embedder)
    secret = "The staging vault is opened by the ops rota, ask Kim"
    async with running(settings, recording) as client:
        (kept,) = await capture(client, alice, [exchange("s-1", 0, "Where do deploys run?", "On Nomad.")])
        (private,) = await capture(client, alice, [exchange("s-1", 1, "Who opens the vault?", secret)])
        (gone,) = await capture(client, alice, [exchange("s-1", 2, "Drop the canary step", "Done, removed.")])
        await client.patch(f"/v1/memories/{private}", json={"is_sensitive": True}, headers=alice)
        await client.delete(f"/v1/memories/{gone}", headers=alice)
        # the same session id elsewhere: another namespace of alice's, and bob's own
        await capture(client, alice, [exchange("s-1", 3, "Other project's turn", "Kafka topics.")], "other")
        await capture(client, bob, [exchange("s-1", 3, "Bob's turn in his session", "Bob's reply.")])
        (last,) = await capture(client, alice, [exchange("s-1", 4, "And after that?", "Ship it.")])
        await drain(client)
        before, after = await memory(job_conn, kept), await memory(job_conn, last)
        hidden = await memory(job_conn, private)
        # neither the sensitive turn, nor the deleted one, nor a turn of another namespace
        assert f"4 March 2026\n{before['content'][:40]}…\n{after['content']}" in recording.documents
        # the sensitive turn is embedded in process, as its own text; never into another's vector
        assert [text for text in recording.documents if "vault" in text] == [
            f"4 March 2026\n{before['content'][:40]}…\n{hidden['content']}"
        ]
        assert not any("Kafka" in text and "Ship it" in text for text in recording.documents)
        assert not any("Bob's" in text and "Ship it" in text for text in recording.documents)


async def test_the_next_turn_is_embedded_again_when_its_previous_turn_arrives_late_turns_sensitive_or_goes(
    settings: Settings, embedder: LocalEmbedder, job_conn: asyncpg.Connection, alice: Headers
) -> None:
    recording = ScriptedEmbedder(embedder)
    async with running(settings, recording) as client:
        first, third = await capture(
            client,
            alice,
            [
                exchange("s-1", 0, "Plan the Postgres 17 upgrade", "Three steps."),
                exchange("s-1", 2, "Next?", "Step three."),
            ],
        )
        await drain(client)
        one, three = await memory(job_conn, first), await memory(job_conn, third)

        def after(previous: asyncpg.Record) -> str:
            return f"4 March 2026\n{previous['content'][:40]}…\n{three['content']}"

        assert recording.documents[-1] == after(one)
        mark = len(recording.documents)
        (second,) = await capture(
            client, alice, [exchange("s-1", 1, "And the first?", "pg_upgrade --check.")]
        )
        await drain(client)
        two = await memory(job_conn, second)
        assert after(two) in recording.documents[mark:], "a turn arriving late is its successor's neighbour"

        mark = len(recording.documents)
        await client.patch(f"/v1/memories/{second}", json={"is_sensitive": True}, headers=alice)
        await drain(client)
        assert recording.documents[mark:] == [after(one)], "a turn made sensitive leaves the next's vector"

        await client.patch(f"/v1/memories/{second}", json={"is_sensitive": False}, headers=alice)
        await drain(client)
        mark = len(recording.documents)
        await client.delete(f"/v1/memories/{second}", headers=alice)
        await drain(client)
        assert recording.documents[mark:] == [after(one)], "a deleted turn leaves the next's vector"
        stored = await memory(job_conn, third)
        assert close(stored["embedding"], await vector_of(recording, after(one)))


async def test_backfill_and_reembed_write_the_vectors_the_first_embedding_wrote(
    settings: Settings,
    embedder: LocalEmbedder,
    job_conn: asyncpg.Connection,
    alice: Headers,
    fake384: FakeEmbeddingServer,
) -> None:
    recording = ScriptedEmbedder(embedder)
    async with running(settings, recording) as client:
        recording.documents.clear()  # the start-up warm-up's text
        await capture(
            client,
            alice,
            [
                exchange("s-1", turn, f"Step {turn} of the migration runbook?", f"Step {turn}: run {word}.")
                for turn, word in enumerate(("pg_dump", "pg_restore", "ANALYZE"))
            ],
        )
        await drain(client)
    first = await job_conn.fetch("SELECT id, embedding FROM memories ORDER BY id")
    assert len(first) == 3 and all(row["embedding"] is not None for row in first)
    jobs_texts = list(recording.documents)

    await job_conn.execute("UPDATE memories SET embedding = NULL, embedding_model = NULL")
    report = await backfill(job_conn, guarded(recording), batch_size=2, progress=_Quiet(), context=CONTEXT)
    assert report.embedded == 3
    assert recording.documents[len(jobs_texts) :] == jobs_texts
    again = await job_conn.fetch("SELECT id, embedding FROM memories ORDER BY id")
    assert all(close(a["embedding"], b["embedding"].to_numpy()) for a, b in zip(again, first, strict=True))

    # to another model and back: each reembed computes the texts the job did
    options = ReembedOptions(batch_size=2, context=CONTEXT)
    away = guarded(await openai_compatible(fake384.url, 384))
    await reembed(job_conn, away, options=options, progress=_Quiet())
    assert [text for batch in fake384.inputs for text in batch] == jobs_texts
    await reembed(job_conn, guarded(recording), options=options, progress=_Quiet())
    back = await job_conn.fetch("SELECT id, embedding, embedding_model FROM memories ORDER BY id")
    assert all(row["embedding_model"] == embedder.model_id for row in back)
    assert all(close(a["embedding"], b["embedding"].to_numpy()) for a, b in zip(back, first, strict=True))


class _Quiet:
    def start(self, phase: str, total: int) -> None:
        pass

    def advance(self, done: int) -> None:
        pass
