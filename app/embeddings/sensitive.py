"""Sensitive memories never leave the process: route them to a local model, or leave them unembedded.

`SensitiveRouter` is an `Embedder` (its identity is the main provider's) that also knows an
optional in-process model for sensitive text. Storage paths call `embed_for_storage`, which sends
each text only to a model allowed to see it and says which model embedded it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.embeddings.base import Embedder, EmbeddingError, Vector


@dataclass(frozen=True, slots=True)
class Embedded:
    vector: Vector
    model_id: str


class SensitiveRouter:
    def __init__(self, main: Embedder, private: Embedder | None = None) -> None:
        if private is not None and not private.is_local:
            raise ValueError("the model for sensitive memories must run in-process")
        self.main = main
        self.private = None if main.is_local else private

    @property
    def model_id(self) -> str:
        return self.main.model_id

    @property
    def dimension(self) -> int:
        return self.main.dimension

    @property
    def is_local(self) -> bool:
        return self.main.is_local

    @property
    def sensitive_model_id(self) -> str | None:
        """The model sensitive text is embedded with, or None when it stays unembedded."""
        if self.main.is_local:
            return self.main.model_id
        return self.private.model_id if self.private is not None else None

    async def load(self) -> None:
        await self.main.load()
        if self.private is None:
            return
        try:
            await self.private.load()
        except EmbeddingError as exc:
            raise EmbeddingError(
                f"sensitive_local_model {self.private.model_id!r} cannot stand in for "
                f"{self.main.model_id} ({self.main.dimension}-d): {exc}"
            ) from exc
        if self.private.dimension != self.main.dimension:
            raise EmbeddingError(
                f"sensitive_local_model {self.private.model_id!r} produces {self.private.dimension}-d "
                f"vectors but {self.main.model_id} produces {self.main.dimension}-d ones"
            )

    async def close(self) -> None:
        try:
            await self.main.close()
        finally:
            if self.private is not None:
                await self.private.close()

    async def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        """The main provider, unguarded: for text known not to be sensitive."""
        return await self.main.embed_documents(texts)

    async def embed_query(self, text: str) -> Vector:
        return await self.main.embed_query(text)

    async def embed_for_storage(
        self, texts: Sequence[str], sensitive: Sequence[bool]
    ) -> list[Embedded | None]:
        """One result per text; None where no model may see it. Raises EmbeddingError on failure."""
        if len(texts) != len(sensitive):
            raise ValueError("texts and sensitive flags differ in length")
        results: list[Embedded | None] = [None] * len(texts)
        routes: list[tuple[Embedder | None, list[int]]] = [
            (self.main, [i for i, s in enumerate(sensitive) if self.main.is_local or not s]),
            (self.private, [i for i, s in enumerate(sensitive) if s and not self.main.is_local]),
        ]
        for model, indices in routes:
            if model is None or not indices:
                continue
            vectors = await model.embed_documents([texts[i] for i in indices])
            if len(vectors) != len(indices):
                raise EmbeddingError(f"{model.model_id} returned {len(vectors)} vectors for {len(indices)}")
            for i, vector in zip(indices, vectors, strict=True):
                results[i] = Embedded(vector, model.model_id)
        return results


def guarded(embedder: Embedder) -> SensitiveRouter:
    """The router for `embedder` (itself when it already is one; no local stand-in otherwise)."""
    return embedder if isinstance(embedder, SensitiveRouter) else SensitiveRouter(embedder)
