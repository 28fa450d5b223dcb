"""The Voyage provider through the real `voyageai.AsyncClient`, against a fake API on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from app.embeddings import EmbeddingError
from app.embeddings.voyage import VoyageEmbedder
from tests.fakes.embedding_server import FakeEmbeddingServer, closed_port_url, fake_vector
from tests.fakes.providers import voyage, voyage_settings


@pytest.fixture
def fake() -> Iterator[FakeEmbeddingServer]:
    with FakeEmbeddingServer(dimension=1024) as server:
        yield server


async def test_documents_go_as_input_type_document_and_queries_as_query(fake: FakeEmbeddingServer) -> None:
    embedder = await voyage(fake.url)
    await embedder.embed_documents(["we deploy with terraform"])
    await embedder.embed_query("how do we deploy?")
    (store, recall) = [r.body for r in fake.requests]
    assert (store["input_type"], store["input"], store["model"]) == (
        "document",
        ["we deploy with terraform"],
        "voyage-3.5",
    )
    assert (recall["input_type"], recall["input"]) == ("query", ["how do we deploy?"])
    assert fake.requests[0].path == "/v1/embeddings"
    assert fake.requests[0].headers["authorization"] == "Bearer test-key"


async def test_300_documents_are_sent_in_three_requests_of_at_most_128(fake: FakeEmbeddingServer) -> None:
    embedder = await voyage(fake.url)
    texts = [f"memory number {i}" for i in range(300)]
    vectors = await embedder.embed_documents(texts)
    assert sorted(len(batch) for batch in fake.inputs) == [44, 128, 128]
    assert sorted(t for batch in fake.inputs for t in batch) == sorted(texts)
    expected = fake_vector(texts[299], 1024)
    assert np.allclose(vectors[299], expected / np.linalg.norm(expected), atol=1e-6)


async def test_long_texts_are_split_by_the_character_budget(fake: FakeEmbeddingServer) -> None:
    embedder = await voyage(fake.url, batch_max_chars=10_000)
    await embedder.embed_documents(["x" * 4000 + str(i) for i in range(5)])
    # the batches go out concurrently: their order of arrival is not the order they were cut in
    assert sorted(len(batch) for batch in fake.inputs) == [1, 2, 2]


async def test_vectors_are_unit_length_float32_in_input_order(fake: FakeEmbeddingServer) -> None:
    embedder = await voyage(fake.url)
    vectors = await embedder.embed_documents(["alpha", "beta", "gamma"])
    for text, vector in zip(["alpha", "beta", "gamma"], vectors, strict=True):
        assert vector.dtype == np.float32 and vector.shape == (1024,)
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
        expected = fake_vector(text, 1024)
        assert np.allclose(vector, expected / np.linalg.norm(expected), atol=1e-6)


async def test_rate_limits_are_retried_then_succeed(fake: FakeEmbeddingServer) -> None:
    embedder = await voyage(fake.url)
    fake.fail_next(429, 429)
    vectors = await embedder.embed_documents(["retry me"])
    assert len(vectors) == 1
    assert len(fake.requests) == 3


async def test_server_errors_are_retried_a_bounded_number_of_times(fake: FakeEmbeddingServer) -> None:
    embedder = await voyage(fake.url, max_retries=2)
    fake.behaviour.always = 503
    with pytest.raises(EmbeddingError, match="gave up after 3 attempts"):
        await embedder.embed_documents(["never"])
    assert len(fake.requests) == 3


async def test_client_errors_are_not_retried(fake: FakeEmbeddingServer) -> None:
    embedder = await voyage(fake.url, max_retries=5)
    fake.fail_next(400)
    with pytest.raises(EmbeddingError, match="HTTP 400"):
        await embedder.embed_documents(["bad request"])
    assert len(fake.requests) == 1


async def test_refused_connection_is_an_embedding_error() -> None:
    embedder = await voyage(closed_port_url(), max_retries=1)
    with pytest.raises(EmbeddingError, match="APIConnectionError"):
        await embedder.embed_documents(["nobody listens"])


async def test_slow_answers_time_out_as_an_embedding_error(fake: FakeEmbeddingServer) -> None:
    embedder = await voyage(fake.url, timeout_s=0.2, max_retries=0)
    fake.behaviour.delay_s = 1.0
    with pytest.raises(EmbeddingError, match="Timeout"):
        await embedder.embed_documents(["too slow"])


async def test_an_answer_of_the_wrong_width_is_an_embedding_error(fake: FakeEmbeddingServer) -> None:
    embedder = await voyage(fake.url)
    fake.behaviour.dimension_override = 512
    with pytest.raises(EmbeddingError, match="expected 1024"):
        await embedder.embed_documents(["narrow"])


async def test_a_narrower_configured_width_is_requested_as_output_dimension() -> None:
    with FakeEmbeddingServer(dimension=512) as fake:
        embedder = await voyage(fake.url, dimension=512)
        assert embedder.dimension == 512
        await embedder.embed_documents(["narrow on purpose"])
        assert fake.requests[0].body["output_dimension"] == 512


async def test_repeated_queries_are_answered_from_the_lru_cache(fake: FakeEmbeddingServer) -> None:
    embedder = await voyage(fake.url, query_cache_size=1)
    first = await embedder.embed_query("what editor?")
    again = await embedder.embed_query("what editor?")
    assert np.array_equal(first, again) and len(fake.requests) == 1
    await embedder.embed_query("another question")  # evicts the first
    await embedder.embed_query("what editor?")
    assert len(fake.requests) == 3


async def test_api_key_falls_back_to_voyage_api_key(
    fake: FakeEmbeddingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VOYAGE_API_KEY", "from-the-environment")
    embedder = VoyageEmbedder(voyage_settings(fake.url, voyage_api_key=None))
    await embedder.load()
    await embedder.embed_documents(["keyed"])
    assert fake.requests[0].headers["authorization"] == "Bearer from-the-environment"


async def test_missing_api_key_is_refused_at_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VOYAGE_API_KEY", raising=False)
    embedder = VoyageEmbedder(voyage_settings("http://127.0.0.1:9", voyage_api_key=None))
    with pytest.raises(EmbeddingError, match="VOYAGE_API_KEY"):
        await embedder.load()
