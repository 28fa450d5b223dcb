"""The arguments of the recall statement (`recall.sql`), one typed field per named parameter.

Field order numbers the parameters: `:name` becomes `$n`, n being the field's position, so the
fields follow the order in which the statement first uses each parameter. A test holds the two
together: every parameter is a field, every field is a parameter, each of the Python type
PostgreSQL infers for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Literal

from pgvector import HalfVector

Sort = Literal["relevance", "importance", "recency"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RecallArgs:
    user_id: int  # whose namespaces are in scope (the authenticated caller, never user text)
    own_names: list[str] | None  # the caller's own namespaces named; None for all of them
    share_owners: list[str]  # namespaces shared with the caller, named `@owner/name`: the owners
    share_names: list[str]  # ... and the names, pairwise
    query: str  # parsed by websearch_to_tsquery: user text can never be a syntax error
    common_lexemes: list[str]  # too common to pick OR-tier candidates (pg_stats, cached)
    expanded_query: str | None  # extra lexical terms, OR-ed in when broadening
    lexical_idf: bool  # OR matches rank by each lexeme's rarity in the scope (term counts)
    lexical_idf_min_memories: int  # ... in a scope of at least this many counted memories
    text_by_namespace: bool  # the lexical tiers ask the text index namespace by namespace
    include_sensitive: bool
    row_filters: bool = field(init=False)  # any of the five row filters below is set
    category: str | None
    tags: list[str] | None
    tags_match_all: bool
    created_since: datetime | None
    kinds: list[str] | None  # 'memory' and/or 'episode'; None for both (no filter)
    created_until: datetime | None
    lexical_cap: int  # most candidates a lexical tier ranks
    w_lexical: float  # 0: the lexical leg does not run
    leg_depth: int  # candidates each leg contributes
    query_vec: HalfVector | None  # the query's embedding; None when no leg needs it or it failed
    w_dense: float  # 0: the dense leg does not run
    small_scope: bool  # the dense leg scans the scope exactly instead of walking the HNSW index
    embedding_model: str  # only vectors of the query's model are comparable to it
    few_namespaces: bool  # the exact scan reads namespace by namespace; else the scope in one scan
    rrf_k: int
    w_graph: float  # 0: the graph leg does not run
    graph_feedback_hits: int  # first-stage hits whose concepts seed the graph leg; 0: none
    graph_feedback_weight: float
    graph_hub_min_doc_freq: float
    graph_hub_fraction: float
    graph_feedback_max_fraction: float
    graph_feedback_concepts: int
    seed_names: list[str]  # concept keys the query mentions (the extractor used on store)
    graph_max_seeds: int
    graph_seed_neighbors: int  # nearest concepts seeded by embedding; 0 without a query vector
    graph_seed_min_similarity: float
    graph_hop_decay: float
    graph_fanout: int
    graph_max_hops: int
    graph_max_concepts: int
    graph_memories_per_concept: int
    score_fusion: bool  # fuse min-max normalised leg scores instead of ranks (RRF)
    include_superseded: bool  # versions no longer current too, each standing for itself
    as_of: datetime | None  # the moment "current" means; None: now
    importance_prior: float
    episode_weight: float  # an episode's final score is scaled by it (curated memories first)
    limit: int
    sort: Sort

    def __post_init__(self) -> None:
        # The statement trusts both: a row filter outside the gate would be ignored, and a leg
        # reading the query vector without one would rank by a NULL distance.
        filtering = (self.category, self.tags, self.created_since, self.kinds, self.created_until)
        object.__setattr__(self, "row_filters", any(value is not None for value in filtering))
        if self.query_vec is None and (self.w_dense > 0 or self.graph_seed_neighbors > 0):
            raise ValueError("the dense leg and concept-embedding seeds need a query vector")
        if len(self.share_owners) != len(self.share_names):
            raise ValueError("every shared namespace named needs its owner, and only those")

    def values(self) -> tuple[object, ...]:
        """The arguments in `$n` order, for `conn.fetch(statement, *args.values())`."""
        return tuple(getattr(self, f.name) for f in fields(self))


def parameter_names() -> list[str]:
    """The statement's parameter names in `$n` order."""
    return [f.name for f in fields(RecallArgs)]
