"""Pick the embedding provider named in settings."""

from __future__ import annotations

from app.embeddings.base import Embedder
from app.embeddings.local import LocalEmbedder
from app.settings import EmbeddingSettings


def build_embedder(settings: EmbeddingSettings) -> Embedder:
    if settings.provider == "local":
        return LocalEmbedder(settings)
    raise NotImplementedError(f"embedding provider {settings.provider!r} is not available yet")
