"""Embedding providers behind one small interface, chosen by settings."""

from app.embeddings.base import Embedder, EmbeddingError, Vector
from app.embeddings.factory import build_embedder
from app.embeddings.local import LocalEmbedder

__all__ = ["Embedder", "EmbeddingError", "LocalEmbedder", "Vector", "build_embedder"]
