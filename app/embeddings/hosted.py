"""What the hosted providers share: batching, bounded concurrency, retries, checks, query cache."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Literal

import anyio

from app.embeddings.base import EmbeddingError, Vector
from app.embeddings.cache import QueryCache
from app.embeddings.retry import RetryPolicy, with_retries
from app.embeddings.settings import EmbeddingSettings
from app.embeddings.vectors import batch_bounds, unit_vectors

InputType = Literal["document", "query"]


class HostedEmbedder(ABC):
    """Text leaves the process, so `is_local` is False: sensitive text must be routed elsewhere."""

    def __init__(self, settings: EmbeddingSettings) -> None:
        self._settings = settings
        self._model_name = settings.model_name
        self._dimension = settings.resolved_dimension
        self._limiter = anyio.CapacityLimiter(settings.max_concurrency)
        self._policy = RetryPolicy.from_settings(settings)
        self._queries = QueryCache(settings.query_cache_size)

    @property
    def model_id(self) -> str:
        return self._model_name

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def is_local(self) -> bool:
        return False

    @abstractmethod
    async def load(self) -> None: ...

    @abstractmethod
    async def close(self) -> None: ...

    @abstractmethod
    async def _request(self, texts: list[str], input_type: InputType) -> Sequence[Sequence[float]]:
        """One HTTP call; raise TransientEmbeddingError for retryable failures, EmbeddingError else."""

    async def _embed_batch(self, texts: list[str], input_type: InputType) -> list[Vector]:
        async with self._limiter:
            rows = await with_retries(self._policy, lambda: self._request(texts, input_type))
        return unit_vectors(rows, len(texts), self._dimension)

    async def _embed(self, texts: Sequence[str], input_type: InputType) -> list[Vector]:
        bounds = batch_bounds(texts, self._settings.batch_size, self._settings.batch_max_chars)
        results: list[list[Vector]] = [[] for _ in bounds]

        async def run(slot: int, start: int, end: int) -> None:
            results[slot] = await self._embed_batch(list(texts[start:end]), input_type)

        if len(bounds) == 1:
            return await self._embed_batch(list(texts), input_type)
        # One failed batch cancels the others: a call is embedded entirely or not at all.
        try:
            async with anyio.create_task_group() as group:
                for slot, (start, end) in enumerate(bounds):
                    group.start_soon(run, slot, start, end)
        except ExceptionGroup as failed:
            raise _first(failed) from failed
        return [vector for batch in results for vector in batch]

    async def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        return await self._embed(texts, "document")

    async def _embed_one_query(self, text: str) -> Vector:
        (vector,) = await self._embed([text], "query")
        return vector

    async def embed_query(self, text: str) -> Vector:
        return await self._queries.get_or_compute(text, self._embed_one_query)


def _first(group: ExceptionGroup[Exception]) -> EmbeddingError:
    """The first failure of a task group, as the EmbeddingError callers handle."""
    exc: Exception = group
    while isinstance(exc, ExceptionGroup):
        exc = exc.exceptions[0]
    return exc if isinstance(exc, EmbeddingError) else EmbeddingError(f"embedding failed: {exc!r}")
