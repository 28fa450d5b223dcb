"""What every model that runs inside this process shares: the blocking work runs in worker threads
(so the event loop never blocks), at most `max_concurrency` calls of stored text and as many of
recall queries at a time, and recall queries go through the query cache.

Queries and stored text have a limiter each: a bulk store holds its slots for the whole of a big
batch (hundreds of milliseconds), and a prompt hook's recall queued behind it would wait that long
for a model call that takes a few. With their own slots a query only shares the cores.

A local model says only how to load itself and how to encode (`load_sync`, `_encode`)."""

from __future__ import annotations

from collections.abc import Sequence

import anyio
import anyio.to_thread

from app.embeddings.base import Vector
from app.embeddings.cache import QueryCache
from app.embeddings.settings import EmbeddingSettings


class InProcessEmbedder:
    """Base of the local embedders (text never leaves the process)."""

    def __init__(self, settings: EmbeddingSettings, query_cache_size: int | None = None) -> None:
        self._settings = settings
        self._dimension = settings.resolved_dimension
        self._limiter = anyio.CapacityLimiter(settings.max_concurrency)  # stored text
        self._query_limiter = anyio.CapacityLimiter(settings.max_concurrency)  # recall queries
        self._queries = QueryCache(
            settings.query_cache_size if query_cache_size is None else query_cache_size
        )

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def is_local(self) -> bool:
        return True

    def load_sync(self) -> None:
        """Load the model (blocking; `load` runs it in a worker thread)."""
        raise NotImplementedError

    def _encode(self, texts: list[str], query: bool = False) -> list[Vector]:
        """Unit-length vectors of `texts`, as recall queries when `query` (blocking)."""
        raise NotImplementedError

    async def load(self) -> None:
        await anyio.to_thread.run_sync(self.load_sync)

    async def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        return await anyio.to_thread.run_sync(self._encode, list(texts), limiter=self._limiter)

    async def _encode_query(self, text: str) -> Vector:
        (vector,) = await anyio.to_thread.run_sync(self._encode, [text], True, limiter=self._query_limiter)
        return vector

    async def embed_query(self, text: str) -> Vector:
        return await self._queries.get_or_compute(text, self._encode_query)
