"""Episodes beside curated memories: the expiry job and the list filters.

The expiry job (`memories.expire`, about no memory) deletes expired, unpinned episodes in batches,
as a purge does (graph evidence first), and enqueues its own next run in the same transaction;
start-up reconciliation keeps exactly one while some episode can expire, and none otherwise.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.embeddings import LocalEmbedder
from app.factory import create_app
from app.jobs import JobSettings, JobWorker
from app.memories.expiry import EXPIRE_JOB
from app.settings import Settings
from tests.ids import internal_id

Client = AsyncTestClient[Litestar]
Headers = dict[str, str]
NO_WORKERS = JobSettings(workers=0)


@asynccontextmanager
async def running(settings: Settings, embedder: LocalEmbedder, **memories: Any) -> AsyncIterator[Client]:
    """The app without job loops (tests drain the queue), memory settings changed by `memories`."""
    changed = settings.model_copy(
        update={"jobs": NO_WORKERS, "memories": settings.memories.model_copy(update=memories)}
    )
    async with AsyncTestClient(app=create_app(changed, embedder=embedder)) as client:
        yield client


async def drain(client: Client) -> None:
    jobs: JobWorker = client.app.state.jobs
    await asyncio.to_thread(lambda: client.blocking_portal.call(jobs.run_pending))


async def reconcile(client: Client) -> None:
    jobs: JobWorker = client.app.state.jobs
    await asyncio.to_thread(lambda: client.blocking_portal.call(jobs.reconcile))


async def capture(client: Client, headers: Headers, turns: range, session: str = "s-1") -> list[int]:
    """Episodes of one session, one per turn; their public ids."""
    exchanges = [
        {
            "session_id": session,
            "turn": turn,
            "prompt": f"What does the staging cluster {turn} run on?",
            "reply": f"Staging cluster {turn} runs on Kubernetes with Postgres {turn}.",
        }
        for turn in turns
    ]
    response = await client.post("/v1/capture/claude-code", json={"exchanges": exchanges}, headers=headers)
    assert response.status_code == 200, response.text
    return [r["ids"][0] for r in response.json()["results"]]


async def store(client: Client, headers: Headers, content: str, **fields: Any) -> int:
    response = await client.post("/v1/memories", json={"content": content, **fields}, headers=headers)
    assert response.status_code == 201, response.text
    memory_id: int = response.json()["id"]
    return memory_id


async def expire(conn: asyncpg.Connection, public_ids: list[int]) -> None:
    """Move these memories' expiry into the past (as thirty days passing would)."""
    await conn.execute(
        "UPDATE memories SET expires_at = now() - interval '1 minute' WHERE public_id = ANY($1::bigint[])",
        public_ids,
    )


async def sweeps(conn: asyncpg.Connection) -> list[asyncpg.Record]:
    return list(
        await conn.fetch(
            "SELECT state, memory_id, extract(epoch FROM run_after - now())::float8 AS due_in_s"
            " FROM jobs WHERE kind = $1 ORDER BY id",
            EXPIRE_JOB,
        )
    )


async def make_sweep_due(conn: asyncpg.Connection) -> None:
    await conn.execute("UPDATE jobs SET run_after = now() WHERE kind = $1", EXPIRE_JOB)


async def live_public_ids(conn: asyncpg.Connection) -> set[int]:
    return {r["public_id"] for r in await conn.fetch("SELECT public_id FROM memories")}


async def assert_graph_counts_match_links(conn: asyncpg.Connection) -> None:
    """What unlinking keeps right (a bare cascade would not): counts equal the links left."""
    drift = await conn.fetch(
        "SELECT c.id FROM concepts c"
        " WHERE c.doc_freq <> (SELECT count(*) FROM memory_concepts mc WHERE mc.concept_id = c.id)"
    )
    assert drift == []
    orphans = await conn.fetchval(
        "SELECT count(*) FROM concepts c WHERE NOT EXISTS"
        " (SELECT 1 FROM memory_concepts mc WHERE mc.concept_id = c.id)"
    )
    assert orphans == 0
    stale = await conn.fetchval(
        "SELECT count(*) FROM concept_edges e, unnest(e.evidence_memory_ids) AS m (id)"
        " WHERE NOT EXISTS (SELECT 1 FROM memories WHERE memories.id = m.id)"
    )
    assert stale == 0
    namespaces = await conn.fetch(
        "SELECT n.graph_memories, (SELECT count(DISTINCT mc.memory_id) FROM memory_concepts mc"
        " JOIN memories m ON m.id = mc.memory_id WHERE m.namespace_id = n.id) AS linked FROM namespaces n"
    )
    assert all(r["graph_memories"] == r["linked"] for r in namespaces)


async def test_the_expiry_job_deletes_only_expired_unpinned_episodes_and_runs_again_later(
    settings: Settings, embedder: LocalEmbedder, alice: Headers, conn: asyncpg.Connection
) -> None:
    async with running(settings, embedder) as client:
        expired, pinned, fresh = await capture(client, alice, range(3))
        curated = await store(client, alice, "Staging cluster secrets rotate every 90 days.")
        await drain(client)  # embeddings and concept links exist, as they would after a while
        assert await conn.fetchval("SELECT count(*) FROM memory_concepts") > 0
        assert [r["state"] for r in await sweeps(conn)] == ["queued"], "the capture started the chain"
        patched = await client.patch(f"/v1/memories/{pinned}", json={"pinned": True}, headers=alice)
        assert patched.status_code == 200 and patched.json()["pinned"] is True
        await expire(conn, [expired, pinned, curated])  # a curated memory never expires, even so
        gone_links = await conn.fetchval(
            "SELECT count(*) FROM memory_concepts WHERE memory_id = $1", await internal_id(conn, expired)
        )
        assert gone_links > 0

        await make_sweep_due(conn)
        await drain(client)

        assert await live_public_ids(conn) == {pinned, fresh, curated}
        await assert_graph_counts_match_links(conn)
        (next_run,) = await sweeps(conn)
        assert next_run["state"] == "queued" and next_run["memory_id"] is None
        assert 500 < next_run["due_in_s"] <= 600, "not a full batch: the next run after the interval"
        assert (await client.get(f"/v1/memories/{expired}", headers=alice)).status_code == 404


async def test_a_full_batch_runs_again_at_once_until_the_backlog_is_gone(
    settings: Settings, embedder: LocalEmbedder, alice: Headers, conn: asyncpg.Connection
) -> None:
    async with running(settings, embedder, expiry_batch=2) as client:
        episodes = await capture(client, alice, range(7))
        await expire(conn, episodes[:5])
        await make_sweep_due(conn)
        await drain(client)  # runs the sweep until a run finds less than a full batch
        assert await live_public_ids(conn) == set(episodes[5:])
        assert [r["state"] for r in await sweeps(conn)] == ["queued"]


async def test_the_chain_ends_with_the_last_episode_and_a_capture_starts_it_again(
    settings: Settings, embedder: LocalEmbedder, alice: Headers, conn: asyncpg.Connection
) -> None:
    async with running(settings, embedder) as client:
        await store(client, alice, "Curated memories alone need no sweep.")
        assert await sweeps(conn) == []
        episodes = await capture(client, alice, range(2))
        await expire(conn, episodes)
        await make_sweep_due(conn)
        await drain(client)
        assert await sweeps(conn) == [], "nothing left that can expire: no timer"
        await capture(client, alice, range(2, 3))
        assert len(await sweeps(conn)) == 1


async def test_start_up_reconcile_keeps_exactly_one_sweep_while_episodes_can_expire(
    settings: Settings, embedder: LocalEmbedder, alice: Headers, conn: asyncpg.Connection
) -> None:
    async with running(settings, embedder) as client:
        await reconcile(client)
        assert await sweeps(conn) == [], "no episodes: no sweep"
        await capture(client, alice, range(1))
        await conn.execute(
            "INSERT INTO jobs (kind, state) VALUES ($1, 'queued'), ($1, 'queued'), ($1, 'failed')", EXPIRE_JOB
        )
        await reconcile(client)
        assert sorted(r["state"] for r in await sweeps(conn)) == ["failed", "queued"]

        await conn.execute("DELETE FROM jobs WHERE kind = $1 AND state = 'queued'", EXPIRE_JOB)
        await reconcile(client)  # the chain gave up (only a failed record left): a new one, due now
        live = [r for r in await sweeps(conn) if r["state"] == "queued"]
        assert len(live) == 1 and live[0]["due_in_s"] <= 0
        await reconcile(client)
        assert len([r for r in await sweeps(conn) if r["state"] == "queued"]) == 1


async def test_the_list_filters_on_kind_and_pinned(
    settings: Settings, embedder: LocalEmbedder, alice: Headers
) -> None:
    async with running(settings, embedder) as client:
        (episode,) = await capture(client, alice, range(1))
        pinned = await store(client, alice, "Always run migrations before the deploy.", pinned=True)
        plain = await store(client, alice, "The staging database is Postgres 16.")

        async def listed(**params: Any) -> set[int]:
            response = await client.get("/v1/memories", params=params, headers=alice)
            assert response.status_code == 200, response.text
            return {m["id"] for m in response.json()["items"]}

        assert await listed() == {episode, pinned, plain}
        assert await listed(kind="episode") == {episode}
        assert await listed(kind="memory") == {pinned, plain}
        assert await listed(pinned="true") == {pinned}
        assert await listed(kind="memory", pinned="false") == {plain}
        bad = await client.get("/v1/memories", params={"kind": "note"}, headers=alice)
        assert bad.status_code in (400, 422), bad.text
        for name in ("kind", "pinned"):  # `null` is no value: refused, never read as "no filter"
            unset = await client.get("/v1/memories", params={name: "null"}, headers=alice)
            assert unset.status_code == 422 and name in unset.json()["detail"], unset.text

        shown = (await client.get(f"/v1/memories/{pinned}", headers=alice)).json()
        assert (shown["kind"], shown["pinned"], shown["expires_at"]) == ("memory", True, None)
        unpinned = await client.patch(f"/v1/memories/{pinned}", json={"pinned": False}, headers=alice)
        assert unpinned.status_code == 200 and unpinned.json()["pinned"] is False
