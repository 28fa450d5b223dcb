"""The OpenAI-compatible provider (httpx) against a fake `/embeddings` endpoint on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from pydantic import ValidationError

from app.embeddings import EmbeddingError
from app.settings import EmbeddingSettings
from tests.fakes.embedding_server import FakeEmbeddingServer, closed_port_url, fake_vector
from tests.fakes.providers import openai_compatible


@pytest.fixture
def fake() -> Iterator[FakeEmbeddingServer]:
    with FakeEmbeddingServer(dimension=16) as server:
        yield server


async def test_requests_have_the_openai_shape_and_the_bearer_key(fake: FakeEmbeddingServer) -> None:
    embedder = await openai_compatible(fake.url, 16, api_key="sk-test")
    await embedder.embed_documents(["one", "two"])
    (request,) = fake.requests
    assert request.path == "/v1/embeddings"
    assert request.body == {"model": "fake-16", "input": ["one", "two"]}
    assert request.headers["authorization"] == "Bearer sk-test"
    await embedder.close()


async def test_no_authorization_header_without_a_key(fake: FakeEmbeddingServer) -> None:
    embedder = await openai_compatible(fake.url, 16)
    await embedder.embed_query("anonymous")
    assert "authorization" not in fake.requests[0].headers
    await embedder.close()


async def test_out_of_order_answers_are_put_back_in_order_and_normalised(fake: FakeEmbeddingServer) -> None:
    fake.behaviour.reverse_order = True
    embedder = await openai_compatible(fake.url, 16)
    texts = ["first", "second", "third"]
    vectors = await embedder.embed_documents(texts)
    for text, vector in zip(texts, vectors, strict=True):
        expected = fake_vector(text, 16)
        assert np.allclose(vector, expected / np.linalg.norm(expected), atol=1e-6)
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
    await embedder.close()


async def test_batches_respect_the_configured_batch_size(fake: FakeEmbeddingServer) -> None:
    embedder = await openai_compatible(fake.url, 16, batch_size=50)
    vectors = await embedder.embed_documents([f"t{i}" for i in range(120)])
    assert len(vectors) == 120
    assert sorted(len(batch) for batch in fake.inputs) == [20, 50, 50]
    await embedder.close()


async def test_429_with_retry_after_is_retried_then_succeeds(fake: FakeEmbeddingServer) -> None:
    embedder = await openai_compatible(fake.url, 16)
    fake.behaviour.retry_after = "0"
    fake.fail_next(429)
    await embedder.embed_documents(["eventually"])
    assert len(fake.requests) == 2
    await embedder.close()


async def test_persistent_5xx_gives_up_after_max_retries(fake: FakeEmbeddingServer) -> None:
    embedder = await openai_compatible(fake.url, 16, max_retries=3)
    fake.behaviour.always = 502
    with pytest.raises(EmbeddingError, match="gave up after 4 attempts"):
        await embedder.embed_documents(["down"])
    assert len(fake.requests) == 4
    await embedder.close()


async def test_unreachable_endpoint_is_an_embedding_error() -> None:
    embedder = await openai_compatible(closed_port_url(), 16, max_retries=1)
    with pytest.raises(EmbeddingError, match="ConnectError"):
        await embedder.embed_documents(["nobody"])
    await embedder.close()


async def test_a_short_answer_is_an_embedding_error(fake: FakeEmbeddingServer) -> None:
    embedder = await openai_compatible(fake.url, 16)
    fake.behaviour.dimension_override = 8
    with pytest.raises(EmbeddingError, match="expected 16"):
        await embedder.embed_documents(["short"])
    await embedder.close()


def test_settings_need_a_base_url_and_a_model() -> None:
    with pytest.raises(ValidationError, match="MEMORIA_EMBEDDINGS__BASE_URL"):
        EmbeddingSettings(provider="openai-compatible", model="m", dimension=8)
    with pytest.raises(ValidationError, match="MEMORIA_EMBEDDINGS__MODEL"):
        EmbeddingSettings(provider="openai-compatible", base_url="http://x", dimension=8)


def test_an_unknown_openai_compatible_model_needs_an_explicit_dimension() -> None:
    settings = EmbeddingSettings(provider="openai-compatible", model="my-embedder", base_url="http://x")
    with pytest.raises(ValueError, match="MEMORIA_EMBEDDINGS__DIMENSION"):
        _ = settings.resolved_dimension
