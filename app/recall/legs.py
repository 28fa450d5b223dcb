"""Which legs one recall runs, decided once: the embedding, the statement's weights and the
response's `legs` all read the same `LegPlan`, so they cannot disagree."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from app.errors import InvalidInput
from app.graph.settings import GraphSettings
from app.recall.schemas import LegWeights
from app.recall.settings import RecallSettings

Leg = Literal["lexical", "dense", "graph"]


@dataclass(frozen=True, slots=True)
class LegPlan:
    """The wanted weight of each leg (the request's over the configured defaults; a disabled graph
    is off whatever the request asks), and why the query has no vector when embedding it failed.
    """

    wanted: dict[Leg, float]
    concept_seeds: bool  # the graph leg also seeds the concepts nearest to the query vector
    embedding_failure: str | None = None

    @classmethod
    def for_request(
        cls, requested: LegWeights | None, recall: RecallSettings, graph: GraphSettings
    ) -> LegPlan:
        """The plan for a request's weights; InvalidInput when no leg is left to run."""
        defaults: dict[Leg, float] = {
            "lexical": recall.weight_lexical,
            "dense": recall.weight_dense,
            "graph": graph.weight,
        }
        wanted: dict[Leg, float] = {
            leg: value if (value := getattr(requested, leg, None)) is not None else default
            for leg, default in defaults.items()
        }
        if not graph.enabled:
            wanted["graph"] = 0.0
        if not any(weight > 0 for weight in wanted.values()):
            raise InvalidInput("at least one leg weight must be above 0")
        return cls(wanted=wanted, concept_seeds=graph.concept_embeddings)

    @property
    def needs_query_vector(self) -> bool:
        """Whether any wanted leg reads the query's embedding (else the model is not asked)."""
        return self.wanted["dense"] > 0 or (self.wanted["graph"] > 0 and self.concept_seeds)

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
        return self.wanted[leg] > 0 and (leg != "dense" or self.has_query_vector)

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
