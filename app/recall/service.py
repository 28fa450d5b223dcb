"""Recall: embed the query, then one transaction with SET LOCAL settings and the one recall statement."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
from pgvector import HalfVector

from app.core import deadline, timing
from app.core.metrics import RecallMetrics
from app.core.time import as_utc
from app.core.validation import TagLimits, clean_tags
from app.db import Database, read_only_transaction
from app.db.replica import retry_on_primary
from app.embeddings import Embedder, EmbeddingError, Vector
from app.errors import InvalidInput
from app.graph import query_concept_names
from app.graph.settings import GraphSettings
from app.namespaces import resolve_scope, shared_address, validate_namespace_name
from app.recall.ef_search import ef_search_for
from app.recall.legs import LEG_NAMES, LEGS, LegPlan
from app.recall.lexemes import CommonLexemes
from app.recall.rerank import Reranker, blend
from app.recall.schemas import (
    EffectiveSettings,
    HitExplanation,
    RecallHit,
    RecallRequest,
    RecallResponse,
)
from app.recall.scope_sizes import ScopeReads, ScopeSizes
from app.recall.settings import RecallSettings
from app.recall.sql import PUSH_BACK_EXPIRY, recall_statement
from app.recall.statement import RecallArgs

log = logging.getLogger(__name__)

# The lexical-only retry after a statement timeout needs this much of the request's time left.
MIN_FALLBACK_S = 0.05
MAX_SCOPES = 10_000
"""Scopes whose namespaces are remembered for their size at most; past it they are read afresh."""


def set_local_sql(
    settings: RecallSettings, statement_timeout_ms: int | None = None, ef_search: int | None = None
) -> str:
    """SET LOCAL lines sent with the recall transaction's BEGIN; values are validated settings.

    SET LOCAL (not SET) keeps them inside the transaction, so a transaction-mode pooler never
    hands them to another client. Parallel workers are off: launching them costs more than a whole
    recall's work, even when the parallel branch never runs. The recall statement runs its
    connection's generic plan: planning it is a large share of a recall's time, and the statement
    is written so that no leg's plan depends on the parameters' values (recall.sql's header).
    JIT is off: the generic plan's estimated cost is above the default `jit_above_cost`, so a
    server built with LLVM would compile the statement's expressions at every recall, which costs
    more than the statement itself.
    `statement_timeout_ms` replaces the configured timeout (a request with less time left), and
    `ef_search` the configured candidate list (one grown with the table: `ef_search.ef_search_for`).
    """
    plan_mode = "force_generic_plan" if settings.generic_plan else "auto"
    return (
        "SET LOCAL max_parallel_workers_per_gather = 0; "  # worker start-up costs more than it saves
        "SET LOCAL jit = off; "  # compiling costs more than the statement (docstring)
        f"SET LOCAL hnsw.ef_search = {int(settings.ef_search if ef_search is None else ef_search)}; "
        f"SET LOCAL hnsw.iterative_scan = {settings.iterative_scan}; "
        f"SET LOCAL hnsw.max_scan_tuples = {int(settings.max_scan_tuples)}; "
        f"SET LOCAL statement_timeout = {int(statement_timeout_ms or settings.statement_timeout_ms)}; "
        f"SET LOCAL plan_cache_mode = {plan_mode}"
    )


class RecallService:
    def __init__(
        self,
        db: Database,
        embedder: Embedder,
        settings: RecallSettings,
        tag_limits: TagLimits,
        graph: GraphSettings | None = None,
        metrics: RecallMetrics | None = None,
        episode_ttl_days: float = 30.0,
        reranker: Reranker | None = None,
    ) -> None:
        """`episode_ttl_days` is the memories' setting (`MEMORIA_MEMORIES__EPISODE_TTL_DAYS`), passed
        in by `create_app`: an episode recall returns lives that long again (`push_back_expiry`)."""
        self._db = db
        self._episode_ttl = timedelta(days=episode_ttl_days)
        self._embedder = embedder
        self._settings = settings
        self._tag_limits = tag_limits
        self._graph = graph or GraphSettings()
        self._metrics = metrics or RecallMetrics()
        self._scope_sizes = ScopeSizes(
            settings.exact_scan_below,
            settings.exact_scan_per_sqrt_rows,
            settings.scope_size_ttl_s,
            settings.text_by_namespace_below_share,
            per_namespace_max=settings.per_namespace_reads_max,
        )
        self._scope_ids: dict[tuple[int, tuple[str, ...] | None], tuple[float, list[int]]] = {}
        self._common_lexemes = CommonLexemes(settings.common_lexeme_fraction, settings.common_lexemes_ttl_s)
        # built here, loaded on the first re-ranked recall: a server nobody asks to re-rank never loads it
        self._reranker = reranker or Reranker(settings.rerank_max_concurrency)

    async def _embed_query(self, query: str, plan: LegPlan) -> tuple[Vector | None, LegPlan]:
        """The query vector when a leg needs it, and the plan without it when the model failed."""
        if not plan.needs_query_vector:
            return None, plan
        try:
            with timing.timed("embed"):
                return await self._embedder.embed_query(query), plan
        except EmbeddingError as exc:  # recall degrades to the legs that work
            log.warning("query embedding failed; recall runs without the dense leg", exc_info=True)
            return None, plan.without_query_vector(type(exc).__name__)

    def _validate(self, request: RecallRequest) -> list[str] | None:
        """The namespaces named, each once, or None for all of the caller's own (a namespace
        shared with the caller is in scope only when named, as `@owner/name`)."""
        if "\x00" in request.query or "\x00" in (request.expanded_query or ""):
            raise InvalidInput("query contains a NUL character")
        if not request.query.strip():
            raise InvalidInput("query must not be empty")
        if request.rerank and request.sort != "relevance":
            raise InvalidInput("rerank re-orders by relevance: it needs sort 'relevance'")
        names: list[str] = []
        if request.namespace is not None:
            names.append(request.namespace)
        names += request.namespaces or []
        for name in names:
            validate_namespace_name(name)
        return sorted(set(names)) or None

    async def recall(self, user_id: int, request: RecallRequest) -> RecallResponse:
        """The answer; read on the replica when one serves reads, again on the primary when the
        replica's connection is lost mid-way (`app.db.replica.retry_on_primary`)."""
        return await retry_on_primary(lambda: self._recall(user_id, request))

    async def _recall(self, user_id: int, request: RecallRequest) -> RecallResponse:
        started = time.perf_counter()
        names = self._validate(request)
        tags = (
            clean_tags(request.filters.tags, self._tag_limits, "filters.tags")
            if request.filters.tags
            else None
        )
        plan = LegPlan.for_request(request.weights, self._settings, self._graph, request.query)
        # The model works in its thread while this one opens the transaction.
        embedding = asyncio.ensure_future(self._embed_query(request.query, plan))
        scope: tuple[ScopeReads, list[str]] | None = None  # set once the statement is about to run
        legs: dict[str, str] | None = None
        try:
            began = time.perf_counter()
            ef_search = self._ef_search()
            async with (
                self._db.read.acquire() as conn,
                read_only_transaction(conn, self._set_local_now(ef_search)),
            ):
                timing.record("begin", (time.perf_counter() - began) * 1000.0)  # acquire, BEGIN, SET LOCALs
                # The statement resolves the scope itself; these two are cached, a round trip only
                # when stale (and the first recall of a scope also answers 404 for a name not found).
                with timing.timed("scope"):
                    reads = await self._scope_reads(conn, user_id, names)
                    common_lexemes = await self._common_lexemes.get(conn)
                    if (for_table := self._ef_search()) != ef_search:  # the table's size was read afresh
                        await conn.execute(f"SET LOCAL hnsw.ef_search = {for_table}")
                with timing.timed("embed-wait"):  # the part of the embedding the steps above did not hide
                    query_vec, plan = await embedding
                args = self._args(request, user_id, names, tags, plan, query_vec, reads, common_lexemes)
                scope = (reads, common_lexemes)
                with timing.timed("sql"):
                    rows = await conn.fetch(recall_statement(), *args.values())
                if names is not None and (not rows or rows[0]["scope_found"] < len(names)):
                    await resolve_scope(conn, user_id, names)  # 404 naming what the statement did not find
                ended = time.perf_counter()
            timing.record("commit", (time.perf_counter() - ended) * 1000.0)
        except asyncpg.QueryCanceledError:
            fallback = self._lexical_fallback(plan) if scope is not None else None
            if fallback is None or scope is None:
                raise  # nothing cheaper to fall back on, or no time left for it: 503
            log.warning("recall statement hit its statement_timeout; answering from the lexical leg alone")
            reads, common_lexemes = scope
            lexical, legs = fallback
            args = self._args(request, user_id, names, tags, lexical, None, reads, common_lexemes)
            async with (
                self._db.read.acquire() as conn,
                read_only_transaction(conn, self._set_local_now(self._ef_search())),
            ):
                rows = await conn.fetch(recall_statement(), *args.values())
            plan = lexical
        finally:
            embedding.cancel()  # a no-op once done; an early error must not leave it dangling
        reranked: list[tuple[float, int] | None] = [None] * len(rows)
        if request.rerank:
            with timing.timed("rerank"):
                rows, reranked = await self._rerank(request.query, rows, request.limit)
        await self._push_back_expiry(rows)
        settings = self._effective(plan, request.limit) if request.explain else None
        if settings is not None and request.rerank:
            settings.rerank_model = f"{self._reranker.model_id}, top {self._rerank_depth(request.limit)}"
        response = RecallResponse(
            results=[self._hit(row, request.explain, how) for row, how in zip(rows, reranked, strict=True)],
            legs=legs or plan.legs,
            degraded=legs is not None or plan.degraded,
            settings=settings,
        )
        self._record(started, request, rows, response.degraded, reads.small)
        return response

    def _rerank_depth(self, limit: int) -> int:
        """Candidates a re-ranked recall reads and re-scores: the setting, or the limit when more."""
        return max(self._settings.rerank_candidates, limit)

    async def _rerank(
        self, query: str, rows: list[asyncpg.Record], limit: int
    ) -> tuple[list[asyncpg.Record], list[tuple[float, int] | None]]:
        """The first `limit` rows after re-ordering the fused candidates (`rerank.blend`), each with
        its re-ranker score and 1-based fused position for `explain`."""
        if not rows:
            return rows, []
        scores = await self._reranker.scores(query, [row["content"] for row in rows])
        order = blend(scores, self._settings.rerank_weight, self._settings.rerank_rrf_k)[:limit]
        return [rows[r.index] for r in order], [(r.score, r.index + 1) for r in order]

    async def _push_back_expiry(self, rows: Sequence[asyncpg.Record]) -> None:
        """Episodes a recall returned live `episode_ttl_days` from now: being recalled is what keeps
        a captured exchange. One UPDATE for all of them, and only when one of them would expire
        within the TTL less a day, so an episode is written at most once a day however often it is
        recalled, and a recall returning no such episode writes nothing.

        The recall transaction is READ ONLY (and its pool may be a replica), so the write goes to
        the primary right after it. It is bookkeeping, not the answer: a failure is logged and the
        hits are returned all the same (the episode is pushed back by the next recall instead).
        """
        due_before = datetime.now(UTC) + self._episode_ttl - timedelta(days=1)
        due = [
            row["memory_id"]
            for row in rows
            if row["kind"] == "episode" and row["expires_at"] is not None and row["expires_at"] < due_before
        ]
        if not due:
            return
        try:
            await self._db.write.execute(PUSH_BACK_EXPIRY, due, self._episode_ttl.total_seconds() / 86400)
        except Exception:  # cancellation (the request's deadline) is no Exception: it still ends the request
            log.warning("pushing back the expiry of %d recalled episodes failed", len(due), exc_info=True)

    def _ef_search(self) -> int:
        """The HNSW candidate list for the table's size as last read (`ef_search.ef_search_for`)."""
        return ef_search_for(self._scope_sizes.table_rows, self._settings)

    def _set_local_now(self, ef_search: int) -> str:
        """The SET LOCAL lines, `statement_timeout` cut to the request's time left: a statement
        nobody waits for any more must not keep PostgreSQL busy."""
        left = deadline.remaining()
        timeout_ms = (
            None if left is None else min(max(int(left * 1000), 1), self._settings.statement_timeout_ms)
        )
        return set_local_sql(self._settings, timeout_ms, ef_search)

    def _lexical_fallback(self, plan: LegPlan) -> tuple[LegPlan, dict[str, str]] | None:
        """After the whole statement ran out of time: the plan with the lexical leg alone (the
        cheap one: no vector index, no graph walk) and the legs as the answer reports them, or None
        when that would not be cheaper or the request has too little time left to try it."""
        dropped = [leg for leg in LEG_NAMES if leg != "lexical" and plan.runs(leg)]
        left = deadline.remaining()
        if not plan.runs("lexical") or not dropped or (left is not None and left < MIN_FALLBACK_S):
            return None
        lexical = replace(
            plan, wanted={leg: w if leg == "lexical" else 0.0 for leg, w in plan.wanted.items()}
        )
        why = "unavailable: statement timeout"
        return lexical, {**plan.legs, **dict.fromkeys(dropped, why)}

    async def _scope_reads(
        self, conn: asyncpg.Connection, user_id: int, names: list[str] | None
    ) -> ScopeReads:
        """How to read the scope `names` (None: all the user's own; `ScopeSizes`), from which
        namespaces it held at most `scope_size_ttl_s` ago: what is in scope now, the statement
        reads itself; which way to read it may lag behind (both ways find the same memories)."""
        key = (user_id, None if names is None else tuple(names))
        now = time.monotonic()
        held = self._scope_ids.get(key)
        if held is None or now - held[0] > self._settings.scope_size_ttl_s:
            if len(self._scope_ids) >= MAX_SCOPES:
                self._scope_ids.clear()
            held = (now, [ns.id for ns in await resolve_scope(conn, user_id, names)])
            self._scope_ids[key] = held
        return await self._scope_sizes.reads(conn, held[1])

    def _args(
        self,
        request: RecallRequest,
        user_id: int,
        names: list[str] | None,
        tags: list[str] | None,
        plan: LegPlan,
        query_vec: Vector | None,
        reads: ScopeReads,
        common_lexemes: list[str],
    ) -> RecallArgs:
        filters, graph, weights = request.filters, self._graph, plan.weights
        shared = [address for name in names or () if (address := shared_address(name)) is not None]
        # both kinds is no filter at all: the statement then skips the row filters (:row_filters)
        kinds: list[str] | None = (
            list(filters.kinds) if filters.kinds and len(set(filters.kinds)) < 2 else None
        )
        # each registered leg's weight binds its `w_<leg>` parameter
        leg_weights: dict[str, Any] = {f"w_{leg}": weight for leg, weight in weights.items()}
        return RecallArgs(
            **leg_weights,
            user_id=user_id,
            own_names=None if names is None else [name for name in names if shared_address(name) is None],
            share_owners=[owner for owner, _ in shared],
            share_names=[name for _, name in shared],
            query=request.query,
            common_lexemes=common_lexemes,
            expanded_query=request.expanded_query,
            lexical_idf=self._settings.lexical_idf,
            lexical_idf_min_memories=self._settings.lexical_idf_min_memories,
            text_by_namespace=reads.text_by_namespace,
            include_sensitive=filters.include_sensitive,
            category=filters.category,
            tags=tags,
            tags_match_all=filters.tags_match == "all",
            created_since=as_utc(filters.created_since),
            kinds=kinds,
            created_until=as_utc(filters.created_until),
            lexical_cap=self._settings.lexical_candidate_cap,
            few_namespaces=reads.few_namespaces,
            leg_depth=self._leg_depth(request.limit),
            query_vec=HalfVector(query_vec) if query_vec is not None else None,
            small_scope=reads.small,
            embedding_model=self._embedder.model_id,
            rrf_k=self._settings.rrf_k,
            graph_feedback_hits=graph.feedback_hits,
            graph_hub_min_doc_freq=graph.hub_min_doc_freq,
            graph_hub_fraction=graph.hub_fraction,
            graph_feedback_max_fraction=graph.feedback_max_fraction,
            graph_feedback_weight=graph.feedback_weight,
            graph_feedback_concepts=graph.feedback_concepts,
            seed_names=query_concept_names(f"{request.query}\n{request.expanded_query or ''}"),
            graph_max_seeds=graph.max_seeds,
            graph_seed_neighbors=graph.seed_neighbors if plan.seeds_nearest_concepts else 0,
            graph_seed_min_similarity=graph.seed_min_similarity,
            graph_hop_decay=graph.hop_decay,
            graph_fanout=graph.fanout,
            graph_max_hops=graph.max_hops,
            graph_max_concepts=graph.max_concepts,
            graph_memories_per_concept=graph.memories_per_concept,
            score_fusion=self._settings.fusion == "scores",
            include_superseded=filters.include_superseded,
            as_of=as_utc(filters.as_of),
            importance_prior=self._settings.importance_prior,
            episode_weight=self._settings.episode_weight,
            limit=self._rerank_depth(request.limit) if request.rerank else request.limit,
            sort=request.sort,
        )

    def _record(
        self,
        started: float,
        request: RecallRequest,
        rows: list[asyncpg.Record],
        degraded: bool,
        small_scope: bool,
    ) -> None:
        """Into the recall metrics: the time since `started`, per leg the returned hits it ranked,
        and whether the answer is short for a big scope (one counted at the small-scope threshold or more)."""
        leg_hits: dict[str, int] = {
            leg.name: sum(row[leg.rank_column] is not None for row in rows) for leg in LEGS
        }
        filters = request.filters
        self._metrics.record(
            time.perf_counter() - started,
            leg_hits,
            results=len(rows),
            limit=request.limit,
            scope_at_least=0 if small_scope else self._scope_sizes.threshold,
            filtered=bool(
                filters.category
                or filters.tags
                or filters.created_since
                or filters.created_until
                or (filters.kinds and len(set(filters.kinds)) < 2)
            ),
            degraded=degraded,
        )

    def _leg_depth(self, limit: int) -> int:
        """Candidates per leg: the configured depth, or `limit` when more are asked for, so that a
        single leg can still fill the answer."""
        return max(self._settings.leg_depth, limit)

    def _effective(self, plan: LegPlan, limit: int) -> EffectiveSettings:
        return EffectiveSettings(
            rrf_k=self._settings.rrf_k,
            leg_depth=self._leg_depth(limit),
            weights=plan.weights,
            ef_search=self._ef_search(),
            iterative_scan=self._settings.iterative_scan,
            lexical_mode="websearch AND, broadened to OR of lexemes when short"
            + (
                ", OR matches ranked by term rarity in a scope of "
                f"{self._settings.lexical_idf_min_memories} memories or more"
                if self._settings.lexical_idf
                else ""
            ),
            graph_max_hops=self._graph.max_hops,
            graph_hop_decay=self._graph.hop_decay,
            graph_feedback_hits=self._graph.feedback_hits,
            fusion=self._settings.fusion,
            query_shape=plan.shape.name if plan.shape is not None else None,
            query_shape_cue=plan.shape.cue if plan.shape is not None else None,
            weight_sources={str(leg): source for leg, source in plan.sources.items()},
        )

    @staticmethod
    def _hit(row: asyncpg.Record, explain: bool, reranked: tuple[float, int] | None = None) -> RecallHit:
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
            kind=row["kind"],
            valid_from=row["valid_from"],
            valid_to=row["valid_to"],
            replaces=list(row["replaces"] or ()),
            superseded_by=row["superseded_by"],
            came_with=row["came_with"],
            explain=HitExplanation(
                **{leg.rank_column: row[leg.rank_column] for leg in LEGS},
                kind=row["kind"],
                graph_path=row["graph_path"],
                lexical_score=row["lexical_score"],
                dense_distance=row["dense_distance"],
                fused_score=row["fused_score"],
                final_score=row["final_score"],
                rerank_score=reranked[0] if reranked is not None else None,
                fused_position=reranked[1] if reranked is not None else None,
            )
            if explain
            else None,
        )
