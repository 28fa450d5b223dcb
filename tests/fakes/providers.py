"""Settings and embedders pointed at a `FakeEmbeddingServer`, with test-speed backoff."""

from __future__ import annotations

from typing import Any

from app.embeddings.openai_compat import OpenAICompatibleEmbedder
from app.embeddings.voyage import VoyageEmbedder
from app.settings import EmbeddingSettings

FAST_RETRIES: dict[str, Any] = {"retry_backoff_s": 0.001, "retry_max_backoff_s": 0.01, "max_retries": 2}


def voyage_settings(base_url: str, **overrides: Any) -> EmbeddingSettings:
    values: dict[str, Any] = {
        "provider": "voyage",
        "voyage_api_key": "test-key",
        "voyage_base_url": f"{base_url}/v1",
        "timeout_s": 2.0,
        **FAST_RETRIES,
    }
    return EmbeddingSettings(**(values | overrides))


def openai_settings(base_url: str, dimension: int, **overrides: Any) -> EmbeddingSettings:
    values: dict[str, Any] = {
        "provider": "openai-compatible",
        "model": f"fake-{dimension}",
        "dimension": dimension,
        "base_url": f"{base_url}/v1",
        "timeout_s": 2.0,
        **FAST_RETRIES,
    }
    return EmbeddingSettings(**(values | overrides))


async def voyage(base_url: str, **overrides: Any) -> VoyageEmbedder:
    embedder = VoyageEmbedder(voyage_settings(base_url, **overrides))
    await embedder.load()
    return embedder


async def openai_compatible(base_url: str, dimension: int, **overrides: Any) -> OpenAICompatibleEmbedder:
    embedder = OpenAICompatibleEmbedder(openai_settings(base_url, dimension, **overrides))
    await embedder.load()
    return embedder
