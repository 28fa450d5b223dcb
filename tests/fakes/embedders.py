"""An embedder with the real model's identity whose query embedding a test can make fail, and which
remembers every document text it was asked to embed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from app.embeddings import LocalEmbedder, Vector


@dataclass
class ScriptedEmbedder:
    """The real model's identity and documents; `embed_query` counts its calls and raises `error`
    when set (an `EmbeddingError` is a provider outage; anything else, a bug); `documents` holds
    every text it embedded as a document (what an embedding path chose to embed)."""

    model: LocalEmbedder
    error: Exception | None = None
    calls: int = 0
    documents: list[str] = field(default_factory=list)

    @property
    def model_id(self) -> str:
        return self.model.model_id

    @property
    def dimension(self) -> int:
        return self.model.dimension

    @property
    def is_local(self) -> bool:
        return True

    async def load(self) -> None: ...

    async def close(self) -> None: ...

    async def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        self.documents += texts
        return await self.model.embed_documents(texts)

    async def embed_query(self, text: str) -> Vector:
        self.calls += 1
        if self.error is not None:
            raise self.error
        return await self.model.embed_query(text)
