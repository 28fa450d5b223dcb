"""Embedding providers behind one small interface, chosen by settings."""

from app.embeddings.base import Embedder, EmbeddingError, Vector
from app.embeddings.e5 import E5Embedder
from app.embeddings.factory import build_embedder
from app.embeddings.local import LocalEmbedder
from app.embeddings.sensitive import Embedded, SensitiveRouter, guarded

__all__ = [
    "E5Embedder",
    "Embedded",
    "Embedder",
    "EmbeddingError",
    "LocalEmbedder",
    "SensitiveRouter",
    "Vector",
    "build_embedder",
    "guarded",
]
