"""One settings object for the whole service, read from `MEMORIA_*` env vars and `.env`.

Nested sections use `__` as the delimiter, e.g. `MEMORIA_DATABASE__URL`. Unknown keys are rejected
so a typo in a deploy manifest fails loudly instead of being ignored.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.hooks.command import default_hook_log as _default_hook_log
from app.hooks.command import default_key_file as _default_key_file

#: Embedding dimensions of the models we know, so `memoria migrate` can fix D without loading a model.
KNOWN_MODEL_DIMENSIONS: dict[str, int] = {
    "all-MiniLM-L6-v2": 384,
    "sentence-transformers/all-MiniLM-L6-v2": 384,
    "voyage-3.5": 1024,
    "voyage-3.5-lite": 1024,
    "voyage-3": 1024,
    "voyage-3-large": 1024,
}

DEFAULT_LOCAL_MODEL = "all-MiniLM-L6-v2"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DatabaseSettings(_Section):
    url: str | None = Field(
        default=None,
        description="PostgreSQL URL for writes (and reads unless read_url is set). Unset = embedded.",
    )
    read_url: str | None = Field(default=None, description="Optional read-only URL used by recall.")
    data_dir: Path = Field(
        default_factory=lambda: Path(platformdirs.user_data_dir("memoria")) / "pgdata",
        description="Data directory of the embedded PostgreSQL (used only when url is unset).",
    )
    database: str = Field(default="memoria", description="Database name inside the embedded server.")
    embedded_shared_buffers: str = Field(
        default="512MB",
        pattern=r"^[1-9][0-9]{0,6}(kB|MB|GB)$",
        description="shared_buffers of the embedded server (applied when it starts), e.g. 512MB or 1GB.",
    )
    statement_cache_size: int = Field(
        default=100,
        ge=0,
        description="asyncpg prepared-statement cache; 0 behind PgBouncer < 1.21 in transaction mode.",
    )
    pool_min_size: int = Field(default=1, ge=0)
    pool_max_size: int = Field(default=10, ge=1)
    command_timeout_s: float = Field(default=10.0, gt=0)


class ServerSettings(_Section):
    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)
    max_body_bytes: int = Field(default=1_048_576, ge=1024, description="Larger request bodies get 413.")
    log_level: Literal["debug", "info", "warning", "error"] = "info"


class EmbeddingSettings(_Section):
    provider: Literal["local", "voyage", "openai-compatible"] = Field(
        default="local", description="local (in-process), voyage (hosted), openai-compatible (HTTP)."
    )
    model: str | None = Field(default=None, description="Model name or path; default depends on provider.")
    dimension: int | None = Field(default=None, ge=1, le=16000, description="Override for unknown models.")
    torch_threads: int = Field(
        default=1,
        ge=1,
        le=64,
        description="intra-op threads per local model call; with MAX_CONCURRENCY calls in parallel, 1 "
        "keeps a single query from fighting itself for cores (p95 500 ms -> 13 ms measured on 2 cores)",
    )
    device: str = "cpu"
    local_runtime: Literal["onnx", "torch"] = Field(
        default="onnx",
        description="onnx: the local model's transformer exported once to ONNX and run by ONNX Runtime "
        "(about 3x faster per query on CPU; falls back to torch if the export fails); torch: eager PyTorch",
    )
    onnx_threads: int = Field(
        default=2,
        ge=1,
        le=64,
        description="intra-op threads of the ONNX Runtime session; idle ones sleep instead of spinning, "
        "so 2 cut a query's embedding from 7.6 to 5.2 ms on 2 cores, no measurable cost at concurrency 8",
    )
    local_quantize: bool = Field(
        default=False,
        description="run the ONNX model with int8 weights: about 2x faster per query (7.6 -> 3.4 ms), "
        "LoCoMo recall unchanged, vectors at a cosine of ~0.99 to the float ones, so it is its own "
        "embedding model (`<model>+int8`): switching needs `memoria embeddings reembed`",
    )
    local_quantize_queries: bool = Field(
        default=True,
        description="embed recall queries (not stored memories) with the int8 weights: 5.8 -> 3.8 ms a "
        "query; stored vectors, the model id and the index stay float, LoCoMo recall unchanged; applies "
        "where the local ONNX runtime runs",
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

    @model_validator(mode="after")
    def _check_provider(self) -> EmbeddingSettings:
        """Fail at start, not on the first store, when a hosted provider is half configured."""
        runs_onnx = (self.provider, self.local_runtime, self.device) == ("local", "onnx", "cpu")
        if self.local_quantize and not runs_onnx:
            raise ValueError("MEMORIA_EMBEDDINGS__LOCAL_QUANTIZE needs the local provider, onnx runtime, cpu")
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


class MemorySettings(_Section):
    max_content_chars: int = Field(default=4000, ge=1, le=100_000)
    max_tags: int = Field(default=32, ge=0)
    max_tag_chars: int = Field(default=64, ge=1)
    max_batch: int = Field(default=100, ge=1, le=1000)
    max_keywords_chars: int = Field(default=2000, ge=0)


class RecallSettings(_Section):
    rrf_k: int = Field(
        default=10,
        ge=1,
        le=1000,
        description="k in the RRF term w / (k + rank); 10 beat 20 and 60 on locomo-dev (bench quality)",
    )
    leg_depth: int = Field(default=50, ge=1, le=1000, description="candidates each leg contributes")
    weight_lexical: float = Field(default=1.0, ge=0, le=10)
    weight_dense: float = Field(default=1.0, ge=0, le=10)
    importance_prior: float = Field(
        default=0.3, ge=0, le=1, description="final = fused * (1 - p + p * importance)"
    )
    ef_search: int = Field(
        default=200,
        ge=1,
        le=1000,
        description="hnsw.ef_search, SET LOCAL per recall (100 missed recall@10 0.98 on a half-table scope)",
    )
    iterative_scan: Literal["off", "relaxed_order", "strict_order"] = "relaxed_order"
    max_scan_tuples: int = Field(default=20000, ge=1, description="hnsw.max_scan_tuples for iterative scans")
    lexical_candidate_cap: int = Field(
        default=1000, ge=1, description="most rows a lexical tier ranks (bounds the leg's cost)"
    )
    statement_timeout_ms: int = Field(default=2000, ge=1, description="SET LOCAL statement_timeout")
    generic_plan: bool = Field(
        default=True,
        description="run the recall statement's cached generic plan instead of re-planning it per call "
        "(2.5-3 ms); false plans each call with its values",
    )
    exact_scan_below: int = Field(
        default=8000,
        ge=0,
        description="scopes with fewer memories use an exact scan instead of the HNSW index (faster "
        "there, and never short), and read lexical matches through their namespaces' index; 0: never",
    )
    scope_size_ttl_s: float = Field(default=60.0, ge=0, description="how long a scope's row count is cached")
    common_lexeme_fraction: float = Field(
        default=0.01,
        ge=0,
        le=1,
        description="lexemes in more than this share of memories (planner statistics) do not pick OR-tier "
        "candidates, they only rank them; 0 turns this off",
    )
    common_lexemes_ttl_s: float = Field(
        default=600.0, ge=0, description="how long the common-lexeme list read from pg_stats is cached"
    )


class HookSettings(_Section):
    """The Claude Code `UserPromptSubmit` hook endpoint (`/v1/hooks/claude-code/user-prompt-submit`)."""

    enabled: bool = Field(default=True, description="False answers every hook call with an empty {}.")
    budget_ms: int = Field(
        default=300, ge=1, le=10_000, description="Server-side time for one recall; past it the answer is {}."
    )
    max_context_chars: int = Field(
        default=3000, ge=200, le=9000, description="Longest additionalContext (Claude Code keeps 10,000)."
    )
    max_results: int = Field(default=8, ge=1, le=50, description="Most memories injected per prompt.")
    min_score: float = Field(default=0.0, ge=0, description="Recall hits scoring below this are left out.")
    min_prompt_chars: int = Field(
        default=12, ge=1, le=1000, description="Shorter prompts (after code is set aside) skip recall."
    )
    namespace_map: dict[str, str] = Field(
        default_factory=dict,
        description="Path prefix -> namespace, checked before the git repository of the event's cwd.",
    )
    default_namespace: str | None = Field(
        default=None, description="Namespace for a cwd outside any git repository; unset = no recall."
    )

    @model_validator(mode="after")
    def _names_are_valid(self) -> HookSettings:
        from app.hooks.namespace import check_namespace

        for name in [*self.namespace_map.values(), self.default_namespace]:
            if name is not None:
                check_namespace(name)
        return self


class ClientSettings(_Section):
    """How `memoria` client commands and the command hook reach a server (`scripts/memoria-hook` reads
    the same `MEMORIA_CLIENT__*` variables, but not `.env`)."""

    url: str = Field(default="http://127.0.0.1:8080", description="Base URL of the Memoria API.")
    api_key: SecretStr | None = Field(default=None, description="API key; else read from key_file.")
    key_file: Path = Field(
        default_factory=lambda: Path(_default_key_file()),
        description="File holding the API key (must be chmod 600).",
    )
    timeout_s: float = Field(default=10.0, gt=0, le=600, description="Per-request timeout of CLI commands.")
    hook_budget_s: float = Field(
        default=1.5, gt=0, le=60, description="Hard total time of one command-hook run (spawn to exit)."
    )
    hook_log: Path = Field(
        default_factory=lambda: Path(_default_hook_log()), description="Where the command hook logs."
    )


class GraphSettings(_Section):
    enabled: bool = Field(default=True, description="extract concepts on store and run the graph leg")
    weight: float = Field(
        default=0.25,
        ge=0,
        le=10,
        description="RRF weight of the graph leg (of 0.25/0.5/1/2, the only one that lowered overall "
        "R@10 on neither LoCoMo dev corpus)",
    )
    concept_embeddings: bool = Field(
        default=False,
        description="embed concept names: seeds the graph by nearest concepts and merges near-duplicates "
        "(costs an embedding per new concept; did not help on locomo-dev)",
    )
    max_concepts_per_memory: int = Field(default=12, ge=1, le=50)
    max_hops: int = Field(default=2, ge=1, le=2, description="hops walked out from the seeds (1 or 2)")
    hop_decay: float = Field(default=0.25, gt=0, le=1, description="activation kept per hop")
    fanout: int = Field(default=8, ge=1, le=200, description="strongest edges followed per concept")
    max_seeds: int = Field(default=8, ge=1, le=100, description="rarest query concepts that seed the walk")
    max_concepts: int = Field(default=32, ge=1, le=1000, description="most activated concepts scored")
    memories_per_concept: int = Field(
        default=50, ge=1, description="most memories one reached concept contributes (bounds the leg's cost)"
    )
    hub_fraction: float = Field(
        default=0.01, gt=0, le=1, description="concepts in more than this share of a namespace are hubs"
    )
    hub_min_doc_freq: int = Field(default=25, ge=1, description="a concept is never a hub below this count")
    seed_neighbors: int = Field(default=5, ge=0, le=50, description="nearest concepts (by embedding) seeded")
    seed_min_similarity: float = Field(default=0.6, ge=0, le=1)
    merge_similarity: float = Field(
        default=0.92, ge=0, le=1, description="a new concept this close to an existing one becomes its alias"
    )
    evidence_ids_kept: int = Field(default=50, ge=1, description="evidence memory ids kept per edge")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="MEMORIA_",
        env_nested_delimiter="__",
        env_file=".env",
        extra="forbid",
        frozen=True,
    )

    database: DatabaseSettings = Field(default_factory=DatabaseSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    embeddings: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    memories: MemorySettings = Field(default_factory=MemorySettings)
    recall: RecallSettings = Field(default_factory=RecallSettings)
    graph: GraphSettings = Field(default_factory=GraphSettings)
    hooks: HookSettings = Field(default_factory=HookSettings)
    client: ClientSettings = Field(default_factory=ClientSettings)

    @model_validator(mode="before")
    @classmethod
    def _reject_unknown_env(cls, data: Any) -> Any:
        """pydantic-settings ignores unknown top-level `MEMORIA_*` variables; we refuse them."""
        known = {name.upper() for name in cls.model_fields}
        unknown = sorted(
            key
            for key in os.environ
            if key.upper().startswith("MEMORIA_") and key[8:].upper().split("__")[0] not in known
        )
        if unknown:
            raise ValueError(f"unknown setting(s) in the environment: {', '.join(unknown)}")
        return data
