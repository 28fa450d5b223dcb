"""Recall: embed the query, then one transaction with SET LOCAL settings and the one recall statement."""

from __future__ import annotations

import asyncio
import logging
import math
import time
from dataclasses import dataclass
from typing import Any

import asyncpg
from pgvector import HalfVector

from app.core.time import as_utc
from app.core.validation import TagLimits, clean_tags
from app.db import Database, read_only_transaction
from app.embeddings import Embedder, Vector
from app.errors import InvalidInput, NotFound
from app.graph.extract import query_concept_names
from app.graph.settings import GraphSettings
from app.namespaces import validate_namespace_name
from app.recall.lexemes import CommonLexemes
from app.recall.schemas import (
    EffectiveSettings,
    HitExplanation,
    RecallHit,
    RecallRequest,
    RecallResponse,
)
from app.recall.settings import RecallSettings
from app.recall.sql import RECALL_PARAMS, RECALL_STATEMENT

log = logging.getLogger(__name__)

_SCOPE_SQL = """
SELECT id, name FROM namespaces
WHERE user_id = $1 AND ($2::text[] IS NULL OR name = ANY($2::text[]))
"""


# Counting stops at the threshold: only "below or not" matters.
_COUNT_SQL = """
SELECT s.namespace_id, (
    SELECT count(*) FROM (
        SELECT 1 FROM memories m
        WHERE m.namespace_id = s.namespace_id AND m.deleted_at IS NULL
        LIMIT $2
    ) capped
) AS n
FROM unnest($1::bigint[]) AS s (namespace_id)
"""


@dataclass(frozen=True, slots=True)
class LegPlan:
    """The effective per-leg weights and whether each leg can run for this request."""

    weights: dict[str, float]
    legs: dict[str, str]

    @property
    def degraded(self) -> bool:
        return any(state.startswith("unavailable") for state in self.legs.values())


def set_local_sql(settings: RecallSettings) -> str:
    """SET LOCAL lines sent with the recall transaction's BEGIN; values are validated settings.

    SET LOCAL (not SET) keeps them inside the transaction, so a transaction-mode pooler never
    hands them to another client. Parallel workers are off: launching them cost ~10 ms per recall
    even when the parallel branch never ran (EXPLAIN on 100k memories). The recall statement runs
    its connection's generic plan: re-planning it per call cost 2.5-3 ms, and the statement is
    written so that no leg's plan depends on the parameters' values (see the CTE comments).
    """
    plan_mode = "force_generic_plan" if settings.generic_plan else "auto"
    return (
        "SET LOCAL max_parallel_workers_per_gather = 0; "  # worker start-up costs more than it saves
        f"SET LOCAL hnsw.ef_search = {int(settings.ef_search)}; "
        f"SET LOCAL hnsw.iterative_scan = {settings.iterative_scan}; "
        f"SET LOCAL hnsw.max_scan_tuples = {int(settings.max_scan_tuples)}; "
        f"SET LOCAL statement_timeout = {int(settings.statement_timeout_ms)}; "
        f"SET LOCAL plan_cache_mode = {plan_mode}"
    )


class ScopeSizes:
    """Live-memory counts per namespace, cached briefly: they pick exact vs HNSW dense search and how
    the lexical leg reads its matches, where a count that is a minute old is as good as a fresh one
    and counting 50k rows is not free."""

    def __init__(self, threshold: int, ttl_s: float) -> None:
        self._threshold = threshold
        self._ttl_s = ttl_s
        self._counts: dict[int, tuple[float, int]] = {}

    async def is_small(self, conn: asyncpg.Connection, namespace_ids: list[int]) -> bool:
        if not namespace_ids:
            return True  # nothing to read: the big-scope path would read every text match to learn it
        if self._threshold <= 0:
            return False
        now = time.monotonic()
        stale = [n for n in namespace_ids if now - self._counts.get(n, (-math.inf, 0))[0] > self._ttl_s]
        if stale:
            rows = await conn.fetch(_COUNT_SQL, stale, self._threshold)
            fresh = {r["namespace_id"]: r["n"] for r in rows}
            for namespace_id in stale:
                self._counts[namespace_id] = (now, fresh.get(namespace_id, 0))
        return sum(self._counts[n][1] for n in namespace_ids) < self._threshold


class RecallService:
    def __init__(
        self,
        db: Database,
        embedder: Embedder,
        settings: RecallSettings,
        tag_limits: TagLimits,
        graph: GraphSettings | None = None,
    ) -> None:
        self._db = db
        self._embedder = embedder
        self._settings = settings
        self._tag_limits = tag_limits
        self._graph = graph or GraphSettings()
        self._set_local = set_local_sql(settings)
        self._scope_sizes = ScopeSizes(settings.exact_scan_below, settings.scope_size_ttl_s)
        self._common_lexemes = CommonLexemes(settings.common_lexeme_fraction, settings.common_lexemes_ttl_s)

    def _weights(self, request: RecallRequest) -> dict[str, float]:
        """The request's leg weights over the configured defaults; 4xx when every leg is off."""
        requested = request.weights
        defaults = {
            "lexical": self._settings.weight_lexical,
            "dense": self._settings.weight_dense,
            "graph": self._graph.weight if self._graph.enabled else 0.0,
        }
        weights = {
            leg: value if (value := getattr(requested, leg, None)) is not None else default
            for leg, default in defaults.items()
        }
        if not any(w > 0 for w in weights.values()):
            raise InvalidInput("at least one leg weight must be above 0")
        return weights

    @staticmethod
    def _plan(weights: dict[str, float], query_vec: Vector | None, embed_error: str | None) -> LegPlan:
        legs = {name: "ok" if weight > 0 else "off" for name, weight in weights.items()}
        if weights["dense"] > 0 and query_vec is None:
            legs["dense"] = f"unavailable: {embed_error or 'no embedder'}"
        return LegPlan(weights=weights, legs=legs)

    async def _embed_query(self, request: RecallRequest) -> tuple[Vector | None, str | None]:
        weights = request.weights
        graph_off = (weights.graph == 0) if weights and weights.graph is not None else not self._graph.enabled
        if weights is not None and weights.dense == 0 and graph_off:
            return None, None  # no leg needs the query vector
        try:
            return await self._embedder.embed_query(request.query), None
        except Exception as exc:  # recall degrades to the legs that work
            log.warning("query embedding failed; recall runs without the dense leg", exc_info=True)
            return None, type(exc).__name__

    def _validate(self, request: RecallRequest) -> list[str] | None:
        if "\x00" in request.query or "\x00" in (request.expanded_query or ""):
            raise InvalidInput("query contains a NUL character")
        if not request.query.strip():
            raise InvalidInput("query must not be empty")
        names: list[str] = []
        if request.namespace is not None:
            names.append(request.namespace)
        names += request.namespaces or []
        for name in names:
            validate_namespace_name(name)
        return sorted(set(names)) or None

    async def recall(self, user_id: int, request: RecallRequest) -> RecallResponse:
        names = self._validate(request)
        filters = request.filters
        tags = clean_tags(filters.tags, self._tag_limits, "filters.tags") if filters.tags else None
        weights = self._weights(request)
        # The model works in its thread while this one opens the transaction and resolves the scope.
        embedding = asyncio.ensure_future(self._embed_query(request))
        try:
            async with self._db.read.acquire() as conn, read_only_transaction(conn, self._set_local):
                scope = await conn.fetch(_SCOPE_SQL, user_id, names)
                if names is not None:
                    missing = sorted(set(names) - {r["name"] for r in scope})
                    if missing:
                        raise NotFound(f"namespace {missing[0]!r} not found")
                namespace_ids = [r["id"] for r in scope]
                small_scope = await self._scope_sizes.is_small(conn, namespace_ids)
                common_lexemes = await self._common_lexemes.get(conn)
                query_vec, embed_error = await embedding
                plan = self._plan(weights, query_vec, embed_error)
                params = self._params(request, tags, query_vec, plan)
                params["namespace_ids"] = namespace_ids
                params["small_scope"] = small_scope
                params["common_lexemes"] = common_lexemes
                rows = await conn.fetch(RECALL_STATEMENT, *(params[name] for name in RECALL_PARAMS))
        finally:
            embedding.cancel()  # a no-op once done; an early error must not leave it dangling
        return RecallResponse(
            results=[self._hit(row, request.explain) for row in rows],
            legs=plan.legs,
            degraded=plan.degraded,
            settings=self._effective(plan) if request.explain else None,
        )

    def _params(
        self, request: RecallRequest, tags: list[str] | None, query_vec: Vector | None, plan: LegPlan
    ) -> dict[str, Any]:
        """The statement's arguments, except the scope (resolved inside the transaction)."""
        filters = request.filters
        return {
            "query": request.query,
            "expanded_query": request.expanded_query,
            "query_vec": HalfVector(query_vec) if query_vec is not None else None,
            "embedding_model": self._embedder.model_id,
            "category": filters.category,
            "tags": tags,
            "tags_match_all": filters.tags_match == "all",
            "created_since": as_utc(filters.created_since),
            "created_until": as_utc(filters.created_until),
            "include_sensitive": filters.include_sensitive,
            "row_filters": any(
                value is not None
                for value in (filters.category, tags, filters.created_since, filters.created_until)
            ),
            "leg_depth": self._settings.leg_depth,
            "rrf_k": self._settings.rrf_k,
            "w_lexical": plan.weights["lexical"],
            "w_dense": plan.weights["dense"] if query_vec is not None else 0.0,
            "importance_prior": self._settings.importance_prior,
            "lexical_cap": self._settings.lexical_candidate_cap,
            "limit": request.limit,
            "sort": request.sort,
            "w_graph": plan.weights["graph"],
            "seed_names": query_concept_names(f"{request.query}\n{request.expanded_query or ''}"),
            "graph_max_hops": self._graph.max_hops,
            "graph_hop_decay": self._graph.hop_decay,
            "graph_fanout": self._graph.fanout,
            "graph_hub_fraction": self._graph.hub_fraction,
            "graph_hub_min_doc_freq": self._graph.hub_min_doc_freq,
            # concept vectors exist only with concept embeddings on; otherwise skip that seed scan
            "graph_seed_neighbors": self._graph.seed_neighbors if self._graph.concept_embeddings else 0,
            "graph_seed_min_similarity": self._graph.seed_min_similarity,
            "graph_max_seeds": self._graph.max_seeds,
            "graph_max_concepts": self._graph.max_concepts,
            "graph_memories_per_concept": self._graph.memories_per_concept,
        }

    def _effective(self, plan: LegPlan) -> EffectiveSettings:
        return EffectiveSettings(
            rrf_k=self._settings.rrf_k,
            leg_depth=self._settings.leg_depth,
            weights=plan.weights,
            ef_search=self._settings.ef_search,
            iterative_scan=self._settings.iterative_scan,
            lexical_mode="websearch AND, broadened to OR of lexemes when short",
            graph_max_hops=self._graph.max_hops,
            graph_hop_decay=self._graph.hop_decay,
        )

    @staticmethod
    def _hit(row: asyncpg.Record, explain: bool) -> RecallHit:
        return RecallHit(
            id=row["id"],
            namespace=row["namespace"],
            content=row["content"],
            category=row["category"],
            tags=row["tags"],
            importance=row["importance"],
            is_sensitive=row["is_sensitive"],
            created_at=row["created_at"],
            score=row["final_score"],
            explain=HitExplanation(
                lexical_rank=row["lexical_rank"],
                dense_rank=row["dense_rank"],
                graph_rank=row["graph_rank"],
                graph_path=row["graph_path"],
                lexical_score=row["lexical_score"],
                dense_distance=row["dense_distance"],
                fused_score=row["fused_score"],
                final_score=row["final_score"],
            )
            if explain
            else None,
        )
