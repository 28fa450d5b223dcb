"""How recall ranks and what it may cost (RRF, leg depth, HNSW and planner settings)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from app.core.settings import Section
from app.recall.query_shape import QueryShape
from app.recall.schemas import Leg

MAX_LEG_FACTOR = 10.0


def _default_shape_factors() -> dict[QueryShape, dict[Leg, float]]:
    return {"advice": {"dense": 2.0}, "temporal": {"dense": 0.5}}


class RecallSettings(Section):
    rrf_k: int = Field(
        default=5,
        ge=1,
        le=1000,
        description="k in the RRF term w / (k + rank)",
    )
    fusion: Literal["rrf", "scores"] = Field(
        default="rrf",
        description="rrf: sum of w / (k + rank); scores: sum of w x the leg's min-max normalised score",
    )
    leg_depth: int = Field(
        default=30,
        ge=1,
        le=1000,
        description="candidates each leg contributes, or the request's limit when that is more: deeper "
        "legs cost every recall more and rank no better (`memoria bench quality --leg-depths`)",
    )
    weight_lexical: float = Field(
        default=1.0,
        ge=0,
        le=10,
        description="RRF weight of the lexical leg; a request may override it (0: off).",
    )
    weight_dense: float = Field(
        default=1.0,
        ge=0,
        le=10,
        description="RRF weight of the dense leg; a request may override it (0: off).",
    )
    query_shapes: bool = Field(
        default=True,
        description="shape-aware fusion: read the query's shape (advice, temporal or other: "
        "app/recall/query_shape.py) and multiply the configured leg weights by that shape's factors in "
        "shape_leg_factors; a request's own weights still win, leg by leg",
    )
    shape_leg_factors: dict[QueryShape, dict[Leg, float]] = Field(
        default_factory=_default_shape_factors,
        description="per query shape, the factor each leg's configured weight is multiplied by when "
        "query_shapes is on (a shape or leg not named: 1). An advice ask is answered by memories of the "
        "asker's tastes, which share its meaning more than its words (dense); a temporal question names "
        "the event it dates, which the words find better than the meaning (lexical)",
    )

    @field_validator("shape_leg_factors")
    @classmethod
    def _factors_in_range(
        cls, value: dict[QueryShape, dict[Leg, float]]
    ) -> dict[QueryShape, dict[Leg, float]]:
        for shape, factors in value.items():
            for leg, factor in factors.items():
                if not 0 <= factor <= MAX_LEG_FACTOR:
                    raise ValueError(f"{shape}.{leg}: a factor from 0 to {MAX_LEG_FACTOR:g}, not {factor:g}")
        return value

    importance_prior: float = Field(
        default=0.3, ge=0, le=1, description="final = fused * (1 - p + p * importance)"
    )
    episode_weight: float = Field(
        default=0.85,
        gt=0,
        le=1,
        description="An episode's final score is scaled by this: below 1, a captured exchange ranks below "
        "a curated memory of the same relevance (1: no preference).",
    )
    ef_search: int = Field(
        default=100,
        ge=1,
        le=1000,
        description="hnsw.ef_search (SET LOCAL per recall) on a table of up to ef_search_grows_above rows: "
        "the HNSW walk's candidate list, dense recall against cost",
    )
    ef_search_grows_above: int = Field(
        default=100_000,
        ge=1,
        description="table rows above which the candidate list grows (app/recall/ef_search.py)",
    )
    ef_search_per_tenfold: int = Field(
        default=100,
        ge=0,
        le=1000,
        description="candidates added for each tenfold of table rows beyond ef_search_grows_above (200 "
        "at a million with the defaults; 0: never grows)",
    )
    iterative_scan: Literal["off", "relaxed_order", "strict_order"] = Field(
        default="relaxed_order",
        description="hnsw.iterative_scan: a filtered HNSW walk goes on past ef_search until the leg is full.",
    )
    max_scan_tuples: int = Field(default=20000, ge=1, description="hnsw.max_scan_tuples for iterative scans")
    lexical_candidate_cap: int = Field(
        default=1000, ge=1, description="most rows a lexical tier ranks (bounds the leg's cost)"
    )
    statement_timeout_ms: int = Field(default=2000, ge=1, description="SET LOCAL statement_timeout")
    generic_plan: bool = Field(
        default=True,
        description="run the recall statement's cached generic plan instead of re-planning it per call; "
        "false plans each call with its values",
    )
    exact_scan_below: int = Field(
        default=8000,
        ge=0,
        description="scopes with fewer memories use an exact scan instead of the HNSW index (faster "
        "there, and never short), and ask the text index for their namespaces' matches alone; 0: never",
    )
    exact_scan_per_sqrt_rows: float = Field(
        default=40.0,
        ge=0,
        description="in a bigger table, scopes below this many times the square root of the table's rows "
        "count as small too (an HNSW walk past other namespaces' rows grows with the table, the exact "
        "scan only with the scope): 40 makes it 40k at 1M rows",
    )
    text_by_namespace_below_share: float = Field(
        default=0.4,
        ge=0,
        le=1,
        description="a big scope holding less than this share of the table (planner statistics) still asks "
        "the text index for its namespaces' matches alone: read table-wide, it would fetch every "
        "namespace's; 0: only small scopes do",
    )
    per_namespace_reads_max: int = Field(
        default=16,
        ge=0,
        description="a scope of at most this many namespaces is read one namespace at a time where it is "
        "read by namespace (one index lookup each); a scope of more in one index scan, so that a "
        "caller's namespace count does not multiply a recall's cost",
    )
    scope_size_ttl_s: float = Field(
        default=60.0, ge=0, description="how long a scope's row count (and the table's statistics) is cached"
    )
    common_lexeme_fraction: float = Field(
        default=0.01,
        ge=0,
        le=1,
        description="lexemes in more than this share of memories (planner statistics) do not pick OR-tier "
        "candidates, they only rank them; 0 turns this off",
    )
    lexical_idf: bool = Field(
        default=False,
        description="rank OR matches of the lexical leg by each query lexeme's rarity in the scope "
        "(BM25's inverse document frequency, from counts a background job keeps) instead of all "
        "lexemes alike; explain's lexical_score is then that idf-weighted sum",
    )
    lexical_idf_min_memories: int = Field(
        default=100,
        ge=0,
        description="term rarity applies only to a scope of at least this many counted memories: in a "
        "smaller one a word's document frequency says little (in five memories, a word in three looks "
        "common), so OR matches rank as without it",
    )
    rerank_candidates: int = Field(
        default=30,
        ge=1,
        le=100,
        description="a recall asked to re-rank (`rerank: true`, agent-initiated recall only; never the "
        "prompt hook) re-scores this many of the fused candidates, or the request's limit when that is "
        "more, with the packaged SPLADE-tiny model (app/recall/rerank.py); each costs one forward pass",
    )
    rerank_weight: float = Field(
        default=1.0,
        ge=0,
        le=10,
        description="weight of the re-ranker's order against the fused order: a re-ranked candidate's "
        "place is 1/(k + fused position) + rerank_weight/(k + re-ranker position); 0 keeps the fused order",
    )
    rerank_rrf_k: int = Field(
        default=60,
        ge=1,
        le=1000,
        description="k of that blend: larger k lets the two orders trade places more evenly",
    )
    rerank_max_concurrency: int = Field(
        default=1,
        ge=1,
        le=64,
        description="re-rankings that run at once (each in a worker thread); more wait their turn",
    )
    common_lexemes_ttl_s: float = Field(
        default=600.0, ge=0, description="how long the common-lexeme list read from pg_stats is cached"
    )
