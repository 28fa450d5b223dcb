"""Voyage AI embeddings through the official async client (`voyageai.AsyncClient`).

The client's own retries are switched off (its `max_retries` counts attempts, waits at least 1 s
and skips connection errors); `with_retries` applies the configured, bounded policy instead.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from app.embeddings.base import EmbeddingError
from app.embeddings.hosted import HostedEmbedder, InputType
from app.embeddings.retry import TransientEmbeddingError, parse_retry_after
from app.embeddings.settings import KNOWN_MODEL_DIMENSIONS, EmbeddingSettings

if TYPE_CHECKING:
    from voyageai.client_async import AsyncClient


def voyage_api_key(settings: EmbeddingSettings) -> str | None:
    """MEMORIA_EMBEDDINGS__VOYAGE_API_KEY first, then the client's usual VOYAGE_API_KEY."""
    if settings.voyage_api_key is not None:
        return settings.voyage_api_key.get_secret_value() or None
    return os.environ.get("VOYAGE_API_KEY") or None


class VoyageEmbedder(HostedEmbedder):
    def __init__(self, settings: EmbeddingSettings) -> None:
        super().__init__(settings)
        self._client: AsyncClient | None = None
        known = KNOWN_MODEL_DIMENSIONS.get(self._model_name)
        # Matryoshka models (voyage-3.5, voyage-3-large) can answer narrower vectors on request.
        self._output_dimension = settings.dimension if settings.dimension not in (None, known) else None

    async def load(self) -> None:
        if self._client is not None:
            return
        key = voyage_api_key(self._settings)
        if key is None:
            raise EmbeddingError(
                "the voyage provider needs an API key: "
                "set MEMORIA_EMBEDDINGS__VOYAGE_API_KEY or VOYAGE_API_KEY"
            )
        from voyageai.client_async import AsyncClient

        self._client = AsyncClient(
            api_key=key,
            max_retries=0,
            timeout=self._settings.timeout_s,
            base_url=self._settings.voyage_base_url,
        )

    async def close(self) -> None:
        self._client = None  # the client opens one aiohttp session per request: nothing to close

    async def _request(self, texts: list[str], input_type: InputType) -> Sequence[Sequence[float]]:
        if self._client is None:
            raise EmbeddingError("voyage embedder is not loaded")
        try:
            result = await self._client.embed(
                texts,
                model=self._model_name,
                input_type=input_type,
                truncation=True,
                output_dimension=self._output_dimension,
            )
        except Exception as exc:
            raise _translate(exc) from exc
        rows: Sequence[Sequence[float]] = result.embeddings
        return rows


def _translate(exc: Exception) -> EmbeddingError:
    """Rate limits, 5xx, timeouts and connection failures are transient; the rest is not."""
    from voyageai import error

    if isinstance(exc, error.VoyageError):
        status: Any = exc.http_status
        transient = isinstance(
            exc,
            error.RateLimitError
            | error.ServerError
            | error.ServiceUnavailableError
            | error.Timeout
            | error.APIConnectionError
            | error.TryAgain,
        ) or (isinstance(status, int) and status >= 500)
        message = f"voyage: {type(exc).__name__} (HTTP {status}): {exc.user_message}"
        if transient:
            return TransientEmbeddingError(message, parse_retry_after(exc.headers.get("Retry-After")))
        return EmbeddingError(message)
    return EmbeddingError(f"voyage: {exc!r}")
