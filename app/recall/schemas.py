"""Request and response shapes of `POST /v1/recall` (the declared constraints are enforced on
decoding and written into the OpenAPI document)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Literal

import msgspec
from msgspec import Meta

LegWeight = Annotated[float, Meta(ge=0.0, le=10.0)]
Leg = Literal["lexical", "dense", "graph"]
"""The recall legs' names (app/recall/legs.py registers each leg under one of them)."""
Kind = Literal["memory", "episode"]
"""`memory`: curated (stored on purpose); `episode`: an exchange captured from a session, which expires."""
NO_NUL = "^[^\x00]*$"  # PostgreSQL text cannot hold U+0000


def _utc_representable(value: datetime | None, name: str) -> None:
    """`0001-01-01T00:00:00+14:00` is valid RFC 3339 whose UTC instant falls in year 0, which the
    driver cannot send (it failed there, as a 500)."""
    if value is not None and value.tzinfo is not None:
        try:
            value.astimezone(UTC)
        except OverflowError:
            raise ValueError(f"{name} is outside years 1-9999 once converted to UTC") from None


class RecallFilters(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    category: Annotated[str, Meta(min_length=1, max_length=64, pattern=NO_NUL)] | None = None
    tags: list[str] | None = None
    tags_match: Literal["any", "all"] = "any"
    created_since: datetime | None = None
    created_until: datetime | None = None
    include_sensitive: bool = False
    kinds: Annotated[list[Kind], Meta(min_length=1, max_length=2)] | None = None
    """Which kinds of memory to search; null (absent) searches both."""
    include_superseded: bool = False
    """Versions no longer current too: superseded memories (each marked `superseded_by`) and memories
    past their `valid_to`, each standing for itself instead of for its newest version."""
    as_of: datetime | None = None
    """Recall what held at this time (null: now): memories valid then, a superseded hit standing for
    the newest version that held then."""

    def __post_init__(self) -> None:
        _utc_representable(self.as_of, "as_of")
        _utc_representable(self.created_since, "created_since")
        _utc_representable(self.created_until, "created_until")
        if self.kinds is not None and len(set(self.kinds)) != len(self.kinds):
            raise ValueError("kinds lists a kind twice")


class LegWeights(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Per-leg RRF weights; a weight of 0 switches a leg off (used for ablations)."""

    lexical: LegWeight | None = None
    dense: LegWeight | None = None
    graph: LegWeight | None = None


class RecallRequest(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    query: Annotated[str, Meta(min_length=1, max_length=8000)]
    namespace: str | None = None
    namespaces: list[str] | None = None
    limit: Annotated[int, Meta(ge=1, le=100)] = 10
    expanded_query: Annotated[str, Meta(max_length=2000)] | None = None
    filters: RecallFilters = msgspec.field(default_factory=RecallFilters)
    sort: Literal["relevance", "importance", "recency"] = "relevance"
    weights: LegWeights | None = None
    explain: bool = False
    rerank: bool = False
    """Re-order the top fused candidates with the packaged re-ranker (app/recall/rerank.py) before
    answering: better first hits for an agent's own question, at tens of milliseconds more. Only with
    `sort: relevance`. The prompt hook never asks for it (its latency budget)."""


class HitExplanation(msgspec.Struct, kw_only=True):
    kind: Kind
    lexical_rank: int | None
    dense_rank: int | None
    graph_rank: int | None
    graph_path: str | None
    lexical_score: float | None
    dense_distance: float | None
    fused_score: float
    final_score: float
    rerank_score: float | None = None
    """The re-ranker's score (SPLADE dot product; 0: no term in common) when the recall was re-ranked
    and this hit was among the candidates it scored; null otherwise."""
    fused_position: int | None = None
    """The hit's 1-based position in the fused order before re-ranking (null when not re-ranked)."""


class RecallHit(msgspec.Struct, kw_only=True):
    id: int
    """The memory's public id, as the memory routes take it (random: not a counter)."""
    namespace: str
    content: str
    category: str | None
    tags: list[str]
    importance: float
    is_sensitive: bool
    created_at: datetime
    score: float
    kind: Kind = "memory"
    """`episode` for an exchange captured from a session (it expires unless recalled or promoted)."""
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    replaces: list[int] = msgspec.field(default_factory=list)
    """Older versions this memory supersedes that the search found (oldest first): it is shown in
    their place, at the best rank among them."""
    superseded_by: int | None = None
    """Set only when versions no longer current are asked for (`include_superseded`): the memory
    that replaces this one."""
    came_with: int | None = None
    """The recalled problem this memory resolves (a `resolved-by` link): it came along with it."""
    explain: HitExplanation | None = None


class EffectiveSettings(msgspec.Struct, kw_only=True):
    rrf_k: int
    leg_depth: int
    weights: dict[str, float]
    ef_search: int
    iterative_scan: str
    lexical_mode: str
    graph_max_hops: int
    graph_hop_decay: float
    graph_feedback_hits: int  # the first-stage hits whose rare concepts activate the graph leg
    fusion: str  # rrf, or scores (min-max normalised leg scores)
    query_shape: str | None = None
    """The shape read from the query (app/recall/query_shape.py): advice, temporal or other; null when
    shape-aware fusion is off (`MEMORIA_RECALL__QUERY_SHAPES`)."""
    query_shape_cue: str | None = None
    """The query's word that decided its shape (null for other)."""
    rerank_model: str | None = None
    """The re-ranker that re-ordered the answer, and how many candidates it scored (null: not re-ranked)."""
    weight_sources: dict[str, str] = msgspec.field(default_factory=dict)
    """Where each leg's weight in `weights` came from: `request` (the request's own), `shape` (the
    configured weight times the shape's factor), `settings` (the configured weight)."""

    def fusion_line(self) -> str:
        """The query's shape and the weight each leg fused with, and where it came from, in one line
        (the MCP answer and the UI's recall page show it): `query shape advice ("recommend"); weights
        lexical 1 (settings), dense 2 (shape), graph 0.25 (settings)`."""
        if self.query_shape is None:
            shape = "shape-aware fusion off"
        else:
            cue = f' ("{self.query_shape_cue}")' if self.query_shape_cue else ""
            shape = f"query shape {self.query_shape}{cue}"
        weights = ", ".join(
            f"{leg} {weight:g} ({self.weight_sources.get(leg, 'settings')})"
            for leg, weight in self.weights.items()
        )
        return f"{shape}; weights {weights}"


class RecallResponse(msgspec.Struct, kw_only=True):
    results: list[RecallHit]
    legs: dict[str, str]
    degraded: bool
    settings: EffectiveSettings | None = None
