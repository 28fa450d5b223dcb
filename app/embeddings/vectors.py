"""Checks on what a provider answered: right count, right width, finite, scaled to unit length."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.embeddings.base import EmbeddingError, Vector


def unit_vectors(rows: Sequence[Sequence[float]], expected: int, dimension: int) -> list[Vector]:
    """Cosine search assumes unit vectors; some endpoints do not normalise, so we always do."""
    if len(rows) != expected:
        raise EmbeddingError(f"provider returned {len(rows)} embeddings for {expected} texts")
    vectors: list[Vector] = []
    for row in rows:
        try:
            vector = np.asarray(row, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise EmbeddingError(f"provider returned a non-numeric embedding: {exc}") from exc
        if vector.ndim != 1 or vector.shape[0] != dimension:
            raise EmbeddingError(f"provider returned a {vector.shape}-shaped embedding, expected {dimension}")
        norm = float(np.linalg.norm(vector))
        if not np.isfinite(norm) or norm == 0.0:
            raise EmbeddingError("provider returned a zero or non-finite embedding")
        vectors.append(vector / np.float32(norm))
    return vectors


def batch_bounds(texts: Sequence[str], max_items: int, max_chars: int) -> list[tuple[int, int]]:
    """Split into [start, end) runs within the item and size budgets; an oversized text goes alone."""
    bounds: list[tuple[int, int]] = []
    start, chars = 0, 0
    for i, text in enumerate(texts):
        if i > start and (i - start >= max_items or chars + len(text) > max_chars):
            bounds.append((start, i))
            start, chars = i, 0
        chars += len(text)
    if start < len(texts):
        bounds.append((start, len(texts)))
    return bounds
