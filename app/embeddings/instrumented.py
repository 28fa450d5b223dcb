"""Embedder latency and errors, recorded at one place: around the model the app was given.

`instrument` wraps the provider (and, behind a `SensitiveRouter`, each of its models, so the router
still decides which text may leave the process); every provider is measured the same way.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from app.core.metrics import EmbeddingMetrics
from app.embeddings.base import Embedder, EmbeddingError, Vector
from app.embeddings.sensitive import SensitiveRouter


class InstrumentedEmbedder:
    """An `Embedder` that times each call of the one it wraps and counts its EmbeddingErrors (a call
    cancelled by its caller is not a measurement and is left out)."""

    def __init__(self, inner: Embedder, metrics: EmbeddingMetrics) -> None:
        self.inner = inner
        self._calls = metrics.for_model(inner.model_id)

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def is_local(self) -> bool:
        return self.inner.is_local

    async def load(self) -> None:
        await self.inner.load()

    async def close(self) -> None:
        await self.inner.close()

    async def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        calls = self._calls
        started = time.perf_counter()
        calls.documents.inc(len(texts))
        try:
            vectors = await self.inner.embed_documents(texts)
        except EmbeddingError:
            calls.documents_errors.inc()
            calls.documents_seconds.observe(time.perf_counter() - started)
            raise
        calls.documents_seconds.observe(time.perf_counter() - started)
        return vectors

    async def embed_query(self, text: str) -> Vector:
        calls = self._calls
        started = time.perf_counter()
        try:
            vector = await self.inner.embed_query(text)
        except EmbeddingError:
            calls.query_errors.inc()
            calls.query_seconds.observe(time.perf_counter() - started)
            raise
        calls.query_seconds.observe(time.perf_counter() - started)
        return vector


def instrument(embedder: Embedder, metrics: EmbeddingMetrics) -> Embedder:
    """`embedder` with its calls measured; a `SensitiveRouter` stays one, around measured models."""
    if isinstance(embedder, SensitiveRouter):
        private = embedder.private
        return SensitiveRouter(
            InstrumentedEmbedder(embedder.main, metrics),
            InstrumentedEmbedder(private, metrics) if private is not None else None,
        )
    return InstrumentedEmbedder(embedder, metrics)
