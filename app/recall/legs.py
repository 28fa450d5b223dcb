"""The recall legs, registered once, and which of them one recall runs.

`LEGS` is the one list of legs: the statement's weights (`w_<name>`, bound by the service) and
explain columns (`<name>_rank`), the default weights, the metrics' `leg` label, the UI's weight
fields and badges, the MCP rendering and the bench's modes are all derived from it. A new leg is
its CTE in recall.sql (and its term in the fusion), an entry here, its weight setting, its
`w_<name>` field in RecallArgs (app/recall/statement.py) and its name in `Leg`, its `<name>` weight
and `<name>_rank` explain fields in app/recall/schemas.py: five files;
tests/test_recall_leg_registry.py checks them.

Which legs one recall runs is decided once: the embedding, the statement's weights and the
response's `legs` all read the same `LegPlan`, so they cannot disagree."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from app.errors import InvalidInput
from app.graph.settings import GraphSettings
from app.recall.query_shape import Shape, query_shape
from app.recall.schemas import Leg, LegWeights
from app.recall.settings import RecallSettings


@dataclass(frozen=True, slots=True)
class LegSpec:
    """One recall leg: its name (weight key, metric label, explain word), its label for people,
    where its default weight is set, and whether it reads the query's embedding."""

    name: Leg
    label: str
    default_weight: Callable[[RecallSettings, GraphSettings], float]
    reads_query_vector: bool = False

    @property
    def rank_column(self) -> str:
        """The statement's column (and the explain field) holding the leg's rank of a hit."""
        return f"{self.name}_rank"


LEGS: tuple[LegSpec, ...] = (
    LegSpec("lexical", "Lexical", lambda recall, graph: recall.weight_lexical),
    LegSpec("dense", "Dense", lambda recall, graph: recall.weight_dense, reads_query_vector=True),
    LegSpec("graph", "Graph", lambda recall, graph: graph.weight),
)
LEG_NAMES: tuple[Leg, ...] = tuple(leg.name for leg in LEGS)
_SPECS: dict[Leg, LegSpec] = {leg.name: leg for leg in LEGS}


@dataclass(frozen=True, slots=True)
class LegPlan:
    """The wanted weight of each leg (the request's over the configured defaults, those scaled by the
    query's shape when shape-aware fusion is on; a disabled graph is off whatever the request asks),
    where each came from, and why the query has no vector when embedding it failed.
    """

    wanted: dict[Leg, float]
    concept_seeds: bool  # the graph leg also seeds the concepts nearest to the query vector
    embedding_failure: str | None = None
    shape: Shape | None = None  # the query's shape, when shape-aware fusion is on
    sources: dict[Leg, str] = field(default_factory=dict)  # per leg: request, shape or settings

    @classmethod
    def for_request(
        cls,
        requested: LegWeights | None,
        recall: RecallSettings,
        graph: GraphSettings,
        query: str | None = None,
    ) -> LegPlan:
        """The plan for a request's weights and, with `recall.query_shapes` on, its query's shape
        (`query_shape`: each configured weight times the shape's factor in `shape_leg_factors`);
        InvalidInput when no leg is left to run."""
        shape = query_shape(query) if recall.query_shapes and query is not None else None
        factors = recall.shape_leg_factors.get(shape.name, {}) if shape is not None else {}
        wanted: dict[Leg, float] = {}
        sources: dict[Leg, str] = {}
        for leg in LEGS:
            asked = getattr(requested, leg.name, None)
            factor = factors.get(leg.name)
            if asked is not None:
                wanted[leg.name], sources[leg.name] = asked, "request"
            elif factor is not None:
                wanted[leg.name] = leg.default_weight(recall, graph) * factor
                sources[leg.name] = "shape"
            else:
                wanted[leg.name], sources[leg.name] = leg.default_weight(recall, graph), "settings"
        if not graph.enabled:
            wanted["graph"] = 0.0
        if not any(weight > 0 for weight in wanted.values()):
            raise InvalidInput("at least one leg weight must be above 0")
        return cls(wanted=wanted, concept_seeds=graph.concept_embeddings, shape=shape, sources=sources)

    @property
    def needs_query_vector(self) -> bool:
        """Whether any wanted leg reads the query's embedding (else the model is not asked)."""
        return any(self.wanted[leg.name] > 0 for leg in LEGS if leg.reads_query_vector) or (
            self.wanted["graph"] > 0 and self.concept_seeds
        )

    def without_query_vector(self, reason: str) -> LegPlan:
        """This plan for a query that could not be embedded: no dense leg, no nearest-concept seeds."""
        return replace(self, embedding_failure=reason)

    @property
    def has_query_vector(self) -> bool:
        return self.needs_query_vector and self.embedding_failure is None

    @property
    def seeds_nearest_concepts(self) -> bool:
        return self.wanted["graph"] > 0 and self.concept_seeds and self.has_query_vector

    def runs(self, leg: Leg) -> bool:
        return self.wanted[leg] > 0 and (not _SPECS[leg].reads_query_vector or self.has_query_vector)

    @property
    def weights(self) -> dict[str, float]:
        """The weights the statement fuses with: 0 for a leg that does not run."""
        return {leg: weight if self.runs(leg) else 0.0 for leg, weight in self.wanted.items()}

    @property
    def legs(self) -> dict[str, str]:
        """Each leg's state for the response: ok, off, or unavailable and why."""
        return {
            leg: "ok"
            if self.runs(leg)
            else "off"
            if weight == 0
            else f"unavailable: {self.embedding_failure}"
            for leg, weight in self.wanted.items()
        }

    @property
    def degraded(self) -> bool:
        return any(state.startswith("unavailable") for state in self.legs.values())
