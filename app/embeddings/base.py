"""The embedding provider interface every backend implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]


class EmbeddingError(RuntimeError):
    """The provider could not embed (outage, timeout, bad answer); callers degrade, never fail."""


class Embedder(Protocol):
    """Turns text into unit-length float32 vectors of a fixed width."""

    @property
    def model_id(self) -> str:
        """Identifier written to `memories.embedding_model`."""
        ...

    @property
    def dimension(self) -> int: ...

    @property
    def is_local(self) -> bool:
        """True when text never leaves this process (safe for sensitive memories)."""
        ...

    async def load(self) -> None:
        """Load models / open clients; called once by the app lifespan."""
        ...

    async def close(self) -> None: ...

    async def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        """Vectors for stored text. Every failure of the model or provider is an EmbeddingError,
        the one exception callers handle (they degrade instead of failing the request)."""
        ...

    async def embed_query(self, text: str) -> Vector:
        """The vector of a recall query; fails only with EmbeddingError, like embed_documents."""
        ...
