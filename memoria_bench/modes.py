"""The recall modes both benchmarks name, as request leg weights: one word, one meaning.

`lexical`, `dense` and `graph` run one leg alone (the others weighted 0); `lexical+dense` fuses the
two text legs and leaves the concept graph out; `all` sends no weights, so recall runs with the
configured defaults: every leg on. A figure labelled with a mode means the same recall in
`bench quality` and in `bench latency`.
"""

from __future__ import annotations

from app.graph.settings import GraphSettings
from app.recall.legs import LEG_NAMES, LegPlan
from app.recall.schemas import LegWeights
from app.recall.settings import RecallSettings

LEXICAL = "lexical"
DENSE = "dense"
GRAPH = "graph"
LEXICAL_DENSE = "lexical+dense"
ALL = "all"


def _only(*legs: str) -> LegWeights:
    """Weights that run `legs` at their configured weights and every other leg not at all."""
    return LegWeights(**{leg: 0.0 for leg in LEG_NAMES if leg not in legs})


# One mode per leg alone (named after it), the two text legs fused, and every leg.
MODE_WEIGHTS: dict[str, LegWeights | None] = {
    **{leg: _only(leg) for leg in LEG_NAMES},
    LEXICAL_DENSE: _only(LEXICAL, DENSE),
    ALL: None,
}


def embeds_query(mode: str, recall: RecallSettings, graph: GraphSettings) -> bool:
    """Whether a recall in `mode` embeds its query: asked of the service's own leg plan."""
    return LegPlan.for_request(MODE_WEIGHTS[mode], recall, graph).needs_query_vector
