"""`memoria embeddings backfill` and `reembed` against the real test database and a fake provider."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import asyncpg
import numpy as np
import psycopg
import pytest
from click.testing import CliRunner
from pgvector import HalfVector

from app.cli import main
from app.embeddings import LocalEmbedder, SensitiveRouter, guarded
from app.embeddings.backfill import backfill
from app.embeddings.jobs import JobError, connect
from app.embeddings.reembed import ReembedOptions, mirror_definition, reembed
from tests.fakes.apps import Client, serving
from tests.fakes.embedding_server import FakeEmbeddingServer, fake_vector
from tests.fakes.providers import openai_compatible, openai_settings
from tests.ids import internal_ids

SECRET = "the vault unseal key is 7f3a-91bc"


class Recorder:
    """A Progress that remembers phases and can run a hook after each batch."""

    def __init__(self, after_batch: Callable[[], None] | None = None) -> None:
        self.phases: list[tuple[str, int]] = []
        self.done = 0
        self._after_batch = after_batch

    def start(self, phase: str, total: int) -> None:
        self.phases.append((phase, total))

    def advance(self, done: int) -> None:
        self.done += done
        if self._after_batch is not None:
            self._after_batch()


@pytest.fixture
def fake384() -> Iterator[FakeEmbeddingServer]:
    with FakeEmbeddingServer(dimension=384) as server:
        yield server


@pytest.fixture
def fake1024() -> Iterator[FakeEmbeddingServer]:
    with FakeEmbeddingServer(dimension=1024) as server:
        yield server


@pytest.fixture
async def job_conn(db_url: str) -> AsyncIterator[asyncpg.Connection]:
    conn = await connect(db_url)
    yield conn
    await conn.close()


async def _store(client: Client, headers: dict[str, str], items: list[dict[str, Any]]) -> list[int]:
    response = await client.post("/v1/memories", json=items, headers=headers)
    assert response.status_code == 201, response.text
    return [r["id"] for r in response.json()["results"]]


async def _store_during_outage(
    db_url: str, fake: FakeEmbeddingServer, items: list[dict[str, Any]]
) -> list[int]:
    embedder = await openai_compatible(fake.url, 384)
    fake.behaviour.always = 503
    async with serving(db_url, embedder, openai_settings(fake.url, 384)) as (client, alice):
        ids = await _store(client, alice, items)
    await embedder.close()
    fake.reset()
    return ids


async def test_backfill_embeds_memories_stored_during_an_outage(
    db_url: str, fake384: FakeEmbeddingServer, job_conn: asyncpg.Connection
) -> None:
    items = [{"content": f"outage memory {i}"} for i in range(3)] + [
        {"content": SECRET, "is_sensitive": True}
    ]
    ids = await internal_ids(job_conn, await _store_during_outage(db_url, fake384, items))  # the jobs' ids
    assert await job_conn.fetchval("SELECT count(*) FROM memories WHERE embedding IS NULL") == 4
    pending = "SELECT memory_id FROM jobs WHERE kind = 'embeddings.embed' ORDER BY memory_id"
    assert [r["memory_id"] for r in await job_conn.fetch(pending)] == ids[:3], "none for the sensitive one"

    router = guarded(await openai_compatible(fake384.url, 384))
    report = await backfill(job_conn, router, batch_size=2, progress=Recorder())
    assert (report.embedded, report.sensitive_left) == (3, 1)
    assert await job_conn.fetch(pending) == [], "the backfill completed the server's embedding jobs"
    rows = await job_conn.fetch(
        "SELECT id, content, vector_dims(embedding) AS dims, embedding_model, embedding "
        "FROM memories ORDER BY id"
    )
    assert [r["id"] for r in rows] == ids
    for row in rows[:3]:
        assert (row["dims"], row["embedding_model"]) == (384, "fake-384")
        expected = fake_vector(row["content"], 384)
        assert np.allclose(row["embedding"].to_numpy(), expected / np.linalg.norm(expected), atol=2e-3)
    assert rows[3]["embedding"] is None
    assert [len(batch) for batch in fake384.inputs] == [2, 1]
    assert SECRET.encode() not in fake384.raw_bodies()

    again = await backfill(job_conn, router, batch_size=2, progress=Recorder())
    assert again.embedded == 0 and len(fake384.requests) == 2


async def test_backfill_resumes_where_a_failed_run_stopped(
    db_url: str, fake384: FakeEmbeddingServer, job_conn: asyncpg.Connection
) -> None:
    texts = [f"resumable {i}" for i in range(5)]
    await _store_during_outage(db_url, fake384, [{"content": t} for t in texts])
    router = guarded(await openai_compatible(fake384.url, 384))

    def break_provider() -> None:
        fake384.behaviour.always = 400

    with pytest.raises(JobError, match="re-run to continue"):
        await backfill(job_conn, router, batch_size=2, progress=Recorder(break_provider))
    assert await job_conn.fetchval("SELECT count(*) FROM memories WHERE embedding IS NOT NULL") == 2

    fake384.behaviour.always = None
    report = await backfill(job_conn, router, batch_size=2, progress=Recorder())
    assert report.embedded == 3
    successful = [r.body["input"] for r in fake384.requests if r is not fake384.requests[1]]
    assert sorted(t for batch in successful for t in batch) == texts


async def test_backfill_refuses_a_model_of_another_width(
    fake1024: FakeEmbeddingServer, job_conn: asyncpg.Connection
) -> None:
    router = guarded(await openai_compatible(fake1024.url, 1024))
    with pytest.raises(JobError, match="384-d embeddings.*reembed"):
        await backfill(job_conn, router, batch_size=10, progress=Recorder())


async def _seed(client: Client, alice: dict[str, str], conn: asyncpg.Connection) -> dict[str, int]:
    public = await _store(
        client, alice, [{"content": f"Deploy note {i}", "namespace": "ops"} for i in range(5)]
    )
    (secret,) = await _store(client, alice, [{"content": SECRET, "is_sensitive": True}])
    response = await client.delete(f"/v1/memories/{public[4]}", headers=alice)
    assert response.status_code == 204
    namespace_id = await conn.fetchval("SELECT id FROM namespaces WHERE name = 'ops'")
    await conn.execute(
        "INSERT INTO concepts (namespace_id, name, display_name, embedding) "
        "VALUES ($1, 'terraform', 'Terraform', array_fill(0.1, ARRAY[384])::halfvec)",
        namespace_id,
    )
    return {"live": 4, "secret": secret, "deleted": public[4]}


async def _embedding_indexes(conn: asyncpg.Connection) -> dict[str, tuple[bool, str]]:
    rows = await conn.fetch(
        "SELECT c.relname, i.indisvalid, pg_get_indexdef(i.indexrelid) AS def FROM pg_index i "
        "JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'memories'::regclass"
    )
    return {r["relname"]: (r["indisvalid"], r["def"]) for r in rows if "embedding" in r["def"]}


async def test_reembed_moves_every_memory_to_a_wider_model(
    client: Client,
    alice: dict[str, str],
    job_conn: asyncpg.Connection,
    fake1024: FakeEmbeddingServer,
    db_url: str,
) -> None:
    seeded = await _seed(client, alice, job_conn)
    target = await openai_compatible(fake1024.url, 1024)
    router = guarded(target)
    report = await reembed(job_conn, router, options=ReembedOptions(batch_size=3), progress=Recorder())

    assert (report.dimension, report.model, report.embedded, report.copied) == (1024, "fake-1024", 4, 0)
    assert report.cleared_columns == ["concepts.embedding"]
    rows = await job_conn.fetch(
        "SELECT id, is_sensitive, deleted_at IS NOT NULL AS deleted, vector_dims(embedding) AS dims, "
        "embedding_model FROM memories ORDER BY id"
    )
    live = [r for r in rows if not r["is_sensitive"] and not r["deleted"]]
    assert len(live) == seeded["live"] and all(
        (r["dims"], r["embedding_model"]) == (1024, "fake-1024") for r in live
    )
    others = [r for r in rows if r["is_sensitive"] or r["deleted"]]
    assert all(r["dims"] is None and r["embedding_model"] is None for r in others)
    assert SECRET.encode() not in fake1024.raw_bodies()

    column_types = dict(
        await job_conn.fetch(
            "SELECT attrelid::regclass::text || '.' || attname, format_type(atttypid, atttypmod) "
            "FROM pg_attribute WHERE attrelid IN ('memories'::regclass, 'concepts'::regclass) "
            "AND attnum > 0 AND NOT attisdropped AND attname LIKE 'embedding%'"
        )
    )
    assert column_types == {
        "memories.embedding": "halfvec(1024)",
        "memories.embedding_model": "text",
        "concepts.embedding": "halfvec(1024)",
    }
    indexes = await _embedding_indexes(job_conn)
    # 1,024 dimensions still fit a btree entry: the per-namespace vectors index moved with them
    assert set(indexes) == {
        "memories_embedding_hnsw_idx",
        "memories_unembedded_idx",
        "memories_scope_vectors_idx",
    }
    assert all(valid for valid, _ in indexes.values())
    assert "hnsw (embedding halfvec_cosine_ops)" in indexes["memories_embedding_hnsw_idx"][1]
    assert "WHERE ((embedding IS NULL)" in indexes["memories_unembedded_idx"][1]
    meta = dict(await job_conn.fetch("SELECT key, value FROM memoria_meta"))
    assert meta == {"embedding_dimension": "1024", "embedding_model": "fake-1024"}

    sent = len(fake1024.requests)
    again = await reembed(job_conn, router, options=ReembedOptions(batch_size=3), progress=Recorder())
    assert again.nothing_to_do and len(fake1024.requests) == sent

    async with serving(db_url, target, openai_settings(fake1024.url, 1024)) as (served, headers):
        (new_id,) = await _store(served, headers, [{"content": "Stored after the switch"}])
    assert (
        await job_conn.fetchval("SELECT vector_dims(embedding) FROM memories WHERE public_id = $1", new_id)
        == 1024
    )
    query = await target.embed_query("Deploy note 2")  # the fake maps equal text to equal vectors
    async with job_conn.transaction():
        await job_conn.execute("SET LOCAL enable_seqscan = off")
        nearest = await job_conn.fetchval(
            "SELECT content FROM memories ORDER BY embedding <=> $1 LIMIT 1", HalfVector(query)
        )
    assert nearest == "Deploy note 2"
    await target.close()


async def test_reembed_drops_the_scope_vectors_index_for_wide_vectors_and_builds_it_again_for_narrow_ones(
    client: Client,
    alice: dict[str, str],
    job_conn: asyncpg.Connection,
    db_url: str,
    fake384: FakeEmbeddingServer,
) -> None:
    await _seed(client, alice, job_conn)
    migrated = (await _embedding_indexes(job_conn))["memories_scope_vectors_idx"]
    with FakeEmbeddingServer(dimension=1536) as fake1536:
        target = await openai_compatible(fake1536.url, 1536)
        report = await reembed(
            job_conn, guarded(target), options=ReembedOptions(batch_size=3), progress=Recorder()
        )
        assert report.dimension == 1536
        indexes = await _embedding_indexes(job_conn)
        assert set(indexes) == {"memories_embedding_hnsw_idx", "memories_unembedded_idx"}
        # a 3 KB vector would not fit that index's entry: storing works without it
        async with serving(db_url, target, openai_settings(fake1536.url, 1536)) as (served, headers):
            (new_id,) = await _store(served, headers, [{"content": "Stored after the switch"}])
        dims = await job_conn.fetchval(
            "SELECT vector_dims(embedding) FROM memories WHERE public_id = $1", new_id
        )
        assert dims == 1536
        await target.close()

    # back to a width a btree entry holds: the index is built again, as migration 0011 made it
    narrow = await openai_compatible(fake384.url, 384)
    report = await reembed(
        job_conn, guarded(narrow), options=ReembedOptions(batch_size=3), progress=Recorder()
    )
    assert report.dimension == 384
    indexes = await _embedding_indexes(job_conn)
    assert set(indexes) == {
        "memories_embedding_hnsw_idx",
        "memories_unembedded_idx",
        "memories_scope_vectors_idx",
    }
    assert indexes["memories_scope_vectors_idx"] == migrated
    assert not await job_conn.fetchval(
        "SELECT count(*) FROM pg_class WHERE relname LIKE '%\\_next' AND relkind = 'i'"
    ), "no mirror is left behind"
    await narrow.close()


async def test_reembed_resumes_after_an_interruption(
    client: Client, alice: dict[str, str], job_conn: asyncpg.Connection, fake1024: FakeEmbeddingServer
) -> None:
    texts = [f"to be moved {i}" for i in range(6)]
    await _store(client, alice, [{"content": t} for t in texts])
    router = guarded(await openai_compatible(fake1024.url, 1024))

    def break_provider() -> None:
        fake1024.behaviour.always = 400

    with pytest.raises(JobError, match="re-run to continue"):
        await reembed(
            job_conn, router, options=ReembedOptions(batch_size=2), progress=Recorder(break_provider)
        )
    assert await job_conn.fetchval("SELECT count(embedding_next) FROM memories") == 2
    assert (
        await job_conn.fetchval("SELECT value FROM memoria_meta WHERE key = 'embedding_dimension'") == "384"
    )

    fake1024.behaviour.always = None
    report = await reembed(job_conn, router, options=ReembedOptions(batch_size=2), progress=Recorder())
    assert report.embedded == 4
    answered = [r.body["input"] for i, r in enumerate(fake1024.requests) if i != 1]
    assert sorted(t for batch in answered for t in batch) == texts
    assert await job_conn.fetchval("SELECT count(*) FROM memories WHERE vector_dims(embedding) = 1024") == 6


async def test_reembed_to_the_same_width_only_embeds_rows_of_other_models(
    client: Client,
    alice: dict[str, str],
    db_url: str,
    job_conn: asyncpg.Connection,
    fake384: FakeEmbeddingServer,
    embedder: LocalEmbedder,
) -> None:
    local_texts = [f"local {i}" for i in range(3)]
    await _store(client, alice, [{"content": t} for t in local_texts])
    hosted = await openai_compatible(fake384.url, 384)
    async with serving(db_url, hosted, openai_settings(fake384.url, 384)) as (served, headers):
        await _store(served, headers, [{"content": f"hosted {i}"} for i in range(3)])
        await _store(served, headers, [{"content": SECRET, "is_sensitive": True}])
    fake384.reset()

    router = SensitiveRouter(hosted, embedder)  # sensitive rows go to the in-process MiniLM
    report = await reembed(job_conn, router, options=ReembedOptions(batch_size=10), progress=Recorder())
    assert (report.copied, report.embedded, report.cleared_columns) == (3, 4, ["concepts.embedding"])
    assert fake384.inputs == [local_texts]
    models = dict(await job_conn.fetch("SELECT content, embedding_model FROM memories"))
    assert models == {
        **dict.fromkeys(local_texts, "fake-384"),
        **{f"hosted {i}": "fake-384" for i in range(3)},
        SECRET: "all-MiniLM-L6-v2",
    }
    assert all(valid for valid, _ in (await _embedding_indexes(job_conn)).values())
    await hosted.close()


def test_index_definitions_are_mirrored_onto_the_side_columns() -> None:
    hnsw = (
        "CREATE INDEX memories_embedding_hnsw_idx ON public.memories USING hnsw "
        "(embedding halfvec_cosine_ops) WITH (m='16', ef_construction='64')"
    )
    assert mirror_definition(hnsw, "memories_embedding_hnsw_idx_next") == (
        'CREATE INDEX CONCURRENTLY IF NOT EXISTS "memories_embedding_hnsw_idx_next" ON public.memories '
        "USING hnsw (embedding_next halfvec_cosine_ops) WITH (m='16', ef_construction='64')"
    )
    partial = (
        "CREATE UNIQUE INDEX x ON public.memories USING btree (id, embedding_model) "
        "WHERE ((embedding IS NULL) AND (deleted_at IS NULL))"
    )
    assert mirror_definition(partial, "x_next").endswith(
        "btree (id, embedding_model_next) WHERE ((embedding_next IS NULL) AND (deleted_at IS NULL))"
    )


def _seed_sync(db_url: str, contents: list[str], user: str = "cli") -> None:
    """Rows as an import or an outage leaves them: no embedding."""
    with psycopg.connect(db_url, autocommit=True) as conn:
        user_id = conn.execute("INSERT INTO users (name) VALUES (%s) RETURNING id", (user,)).fetchone()
        assert user_id is not None
        ns = conn.execute(
            "INSERT INTO namespaces (user_id, name) VALUES (%s, 'cli') RETURNING id", user_id
        ).fetchone()
        assert ns is not None
        for content in contents:
            conn.execute(
                "INSERT INTO memories (namespace_id, content, content_hash) VALUES (%s, %s, %s)",
                (ns[0], content, hashlib.sha256(content.encode()).digest()),
            )


def test_the_cli_reembeds_then_backfills_the_configured_database(
    db_url: str, fake1024: FakeEmbeddingServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.chdir(tmp_path)  # no stray .env
    _seed_sync(db_url, ["cli one", "cli two"])
    target = ["--provider", "openai-compatible", "--model", "fake-1024", "--dimension", "1024"]
    env = {"MEMORIA_DATABASE__URL": db_url}
    runner = CliRunner()
    moved = runner.invoke(
        main, ["embeddings", "reembed", *target, "--base-url", f"{fake1024.url}/v1"], env=env
    )
    assert moved.exit_code == 0, moved.output
    assert "now 1024-d fake-1024: 2 embedded" in moved.output

    _seed_sync(db_url, ["cli three"], user="cli2")
    configured = env | {
        "MEMORIA_EMBEDDINGS__PROVIDER": "openai-compatible",
        "MEMORIA_EMBEDDINGS__MODEL": "fake-1024",
        "MEMORIA_EMBEDDINGS__DIMENSION": "1024",
        "MEMORIA_EMBEDDINGS__BASE_URL": f"{fake1024.url}/v1",
    }
    filled = runner.invoke(main, ["embeddings", "backfill"], env=configured)
    assert filled.exit_code == 0, filled.output
    assert "embedded 1 memories with fake-1024" in filled.output
    with psycopg.connect(db_url) as conn:
        dims = conn.execute("SELECT vector_dims(embedding) FROM memories ORDER BY id").fetchall()
    assert dims == [(1024,), (1024,), (1024,)]

    refused = runner.invoke(main, ["embeddings", "backfill"], env=env)  # still configured for 384-d MiniLM
    assert refused.exit_code != 0 and "1024-d embeddings" in refused.output
