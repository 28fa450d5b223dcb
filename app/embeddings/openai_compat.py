"""Any OpenAI-compatible `/embeddings` endpoint (OpenAI, vLLM, TEI, Ollama, LiteLLM...) over httpx."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from app.embeddings.base import EmbeddingError
from app.embeddings.hosted import HostedEmbedder, InputType
from app.embeddings.retry import TransientEmbeddingError, parse_retry_after
from app.embeddings.settings import EmbeddingSettings


class OpenAICompatibleEmbedder(HostedEmbedder):
    """The OpenAI shape has no query/document distinction, so both paths send the same request."""

    def __init__(self, settings: EmbeddingSettings) -> None:
        super().__init__(settings)
        if not settings.base_url:
            raise EmbeddingError("the openai-compatible provider needs MEMORIA_EMBEDDINGS__BASE_URL")
        self._base_url = settings.base_url.rstrip("/") + "/"
        self._client: httpx.AsyncClient | None = None

    async def load(self) -> None:
        if self._client is not None:
            return
        headers = {"Accept": "application/json"}
        if self._settings.api_key is not None:
            headers["Authorization"] = f"Bearer {self._settings.api_key.get_secret_value()}"
        self._client = httpx.AsyncClient(
            base_url=self._base_url, headers=headers, timeout=httpx.Timeout(self._settings.timeout_s)
        )

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    async def _request(self, texts: list[str], input_type: InputType) -> Sequence[Sequence[float]]:
        if self._client is None:
            raise EmbeddingError("openai-compatible embedder is not loaded")
        try:
            response = await self._client.post("embeddings", json={"model": self._model_name, "input": texts})
        except httpx.TimeoutException as exc:
            raise TransientEmbeddingError(f"openai-compatible: timed out ({type(exc).__name__})") from exc
        except httpx.TransportError as exc:
            raise TransientEmbeddingError(f"openai-compatible: {type(exc).__name__}: {exc}") from exc
        status = response.status_code
        if status == 429 or status >= 500:
            raise TransientEmbeddingError(
                f"openai-compatible: HTTP {status}", parse_retry_after(response.headers.get("Retry-After"))
            )
        if status != 200:
            raise EmbeddingError(f"openai-compatible: HTTP {status}: {response.text[:200]}")
        try:
            return _rows_in_order(response.json(), len(texts))
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbeddingError(f"openai-compatible: malformed answer: {exc!r}") from exc


def _rows_in_order(body: Any, expected: int) -> list[list[float]]:
    """`data` items carry their input position in `index`; servers may answer out of order."""
    items = body["data"]
    indices = sorted(int(item["index"]) for item in items)
    if indices != list(range(expected)):
        raise ValueError(f"answer covers indices {indices[:5]}..., expected 0..{expected - 1}")
    return [list(item["embedding"]) for item in sorted(items, key=lambda item: int(item["index"]))]
