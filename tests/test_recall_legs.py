"""Which legs a recall runs is decided once (`LegPlan`): the embedding, the statement's weights and the
response's `legs` follow it, and only an embedding failure (EmbeddingError) degrades a recall."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from app.auth.service import create_user
from app.db import Database, create_database
from app.db.plans import StatementTimer
from app.embeddings import EmbeddingError, LocalEmbedder
from app.errors import InvalidInput
from app.graph.settings import GraphSettings
from app.memories.service import content_hash
from app.recall.legs import LegPlan
from app.recall.schemas import LegWeights, RecallRequest
from app.recall.service import RecallService
from app.recall.settings import RecallSettings
from app.recall.sql import recall_statement
from app.recall.statement import parameter_names
from app.settings import DatabaseSettings, MemorySettings
from tests.fakes.embedders import ScriptedEmbedder

RECALL = RecallSettings()
GRAPH = GraphSettings()
LEXICAL_ONLY = LegWeights(dense=0, graph=0)


def test_request_weights_override_the_defaults_leg_by_leg() -> None:
    plan = LegPlan.for_request(LegWeights(dense=2.0), RECALL, GRAPH)
    assert plan.weights == {"lexical": RECALL.weight_lexical, "dense": 2.0, "graph": GRAPH.weight}
    assert plan.legs == {"lexical": "ok", "dense": "ok", "graph": "ok"} and not plan.degraded


def test_a_disabled_graph_stays_off_whatever_the_request_asks() -> None:
    disabled = GraphSettings(enabled=False)
    plan = LegPlan.for_request(LegWeights(graph=1.0), RECALL, disabled)
    assert plan.weights["graph"] == 0 and plan.legs["graph"] == "off"
    with pytest.raises(InvalidInput):
        LegPlan.for_request(LegWeights(lexical=0, dense=0, graph=1.0), RECALL, disabled)


def test_no_leg_left_to_run_is_invalid_input() -> None:
    with pytest.raises(InvalidInput):
        LegPlan.for_request(LegWeights(lexical=0, dense=0, graph=0), RECALL, GRAPH)


@pytest.mark.parametrize(
    ("weights", "concept_embeddings", "embeds"),
    [
        (None, False, True),
        (LegWeights(lexical=0, graph=0), False, True),
        (LEXICAL_ONLY, False, False),
        (LegWeights(dense=0), False, False),  # the graph seeds by concept names alone
        (LegWeights(dense=0), True, True),  # ... and by the concepts nearest to the query vector
    ],
)
def test_the_query_is_embedded_only_for_a_leg_that_reads_its_vector(
    weights: LegWeights | None, concept_embeddings: bool, embeds: bool
) -> None:
    graph = GraphSettings(concept_embeddings=concept_embeddings)
    assert LegPlan.for_request(weights, RECALL, graph).needs_query_vector is embeds


def test_without_a_query_vector_the_dense_leg_is_unavailable_and_out_of_the_fusion() -> None:
    graph = GraphSettings(concept_embeddings=True)
    plan = LegPlan.for_request(None, RECALL, graph).without_query_vector("EmbeddingError")
    assert plan.weights == {"lexical": RECALL.weight_lexical, "dense": 0.0, "graph": GRAPH.weight}
    assert plan.legs == {"lexical": "ok", "dense": "unavailable: EmbeddingError", "graph": "ok"}
    assert plan.degraded and not plan.seeds_nearest_concepts


@dataclass(frozen=True, slots=True)
class Corpus:
    db: Database
    user_id: int


@pytest.fixture
async def corpus(db_url: str) -> AsyncIterator[Corpus]:
    """One memory in namespace "n", written straight in SQL (no embedding: the lexical leg finds it)."""
    db = await create_database(db_url, DatabaseSettings(url=db_url, pool_min_size=1, pool_max_size=1))
    async with db.write.acquire() as conn:
        user_id = await create_user(conn, "legs")
        namespace_id = await conn.fetchval(
            "INSERT INTO namespaces (user_id, name) VALUES ($1, 'n') RETURNING id", user_id
        )
        content = "the boiler needs a yearly service"
        await conn.execute(
            "INSERT INTO memories (namespace_id, content, content_hash) VALUES ($1, $2, $3)",
            namespace_id,
            content,
            content_hash(content),
        )
    yield Corpus(db, user_id)
    await db.close()


async def _recall_args(
    corpus: Corpus, embedder: ScriptedEmbedder, request: RecallRequest
) -> dict[str, object]:
    """The response's legs and the arguments the statement ran with, by parameter name."""
    timer = StatementTimer(recall_statement())
    async with corpus.db.read.acquire() as conn:
        conn.add_query_logger(timer)
    service = RecallService(corpus.db, embedder, RECALL, MemorySettings().tag_limits)
    response = await service.recall(corpus.user_id, request)
    (_, args), *_ = timer.records
    return {
        "legs": response.legs,
        "degraded": response.degraded,
        "hits": len(response.results),
        **dict(zip(parameter_names(), args, strict=True)),
    }


async def test_recall_without_a_query_vector_runs_the_other_legs_and_says_why(
    corpus: Corpus, embedder: LocalEmbedder
) -> None:
    failing = ScriptedEmbedder(embedder, error=EmbeddingError("provider down"))
    ran = await _recall_args(corpus, failing, RecallRequest(query="boiler service"))
    assert ran["legs"] == {"lexical": "ok", "dense": "unavailable: EmbeddingError", "graph": "ok"}
    assert ran["degraded"] is True and ran["hits"] == 1
    assert ran["w_dense"] == 0.0 and ran["query_vec"] is None and ran["graph_seed_neighbors"] == 0


async def test_a_failure_that_is_no_embedding_error_is_not_taken_for_an_outage(
    corpus: Corpus, embedder: LocalEmbedder
) -> None:
    buggy = ScriptedEmbedder(embedder, error=ValueError("a bug, not an outage"))
    with pytest.raises(ValueError, match="a bug"):
        await _recall_args(corpus, buggy, RecallRequest(query="boiler service"))


async def test_lexical_only_recall_never_asks_the_model(corpus: Corpus, embedder: LocalEmbedder) -> None:
    counting = ScriptedEmbedder(embedder)
    ran = await _recall_args(corpus, counting, RecallRequest(query="boiler service", weights=LEXICAL_ONLY))
    assert counting.calls == 0 and ran["hits"] == 1
    assert ran["legs"] == {"lexical": "ok", "dense": "off", "graph": "off"} and ran["degraded"] is False
    assert (ran["w_lexical"], ran["w_dense"], ran["w_graph"]) == (RECALL.weight_lexical, 0.0, 0.0)


async def test_a_wanted_dense_leg_gets_the_query_vector_and_its_weight(
    corpus: Corpus, embedder: LocalEmbedder
) -> None:
    counting = ScriptedEmbedder(embedder)
    ran = await _recall_args(corpus, counting, RecallRequest(query="boiler service"))
    assert counting.calls == 1 and ran["query_vec"] is not None
    assert ran["w_dense"] == RECALL.weight_dense and ran["legs"] == {
        "lexical": "ok",
        "dense": "ok",
        "graph": "ok",
    }


async def test_score_fusion_adds_each_legs_score_over_that_legs_best(
    corpus: Corpus, embedder: LocalEmbedder
) -> None:
    async with corpus.db.write.acquire() as conn:
        namespace_id = await conn.fetchval("SELECT id FROM namespaces WHERE name = 'n'")
        content = "the boiler needs a yearly service, boiler service booked"
        await conn.execute(
            "INSERT INTO memories (namespace_id, content, content_hash) VALUES ($1, $2, $3)",
            namespace_id,
            content,
            content_hash(content),
        )
    by_scores = RecallService(
        corpus.db, embedder, RecallSettings(fusion="scores"), MemorySettings().tag_limits
    )
    request = RecallRequest(
        query="boiler service", weights=LegWeights(lexical=2, dense=0, graph=0), explain=True
    )
    hits = [h.explain for h in (await by_scores.recall(corpus.user_id, request)).results]
    assert len(hits) == 2 and all(h is not None for h in hits)
    best, other = hits[0], hits[1]
    assert best is not None and other is not None
    assert best.lexical_score is not None and other.lexical_score is not None
    assert best.fused_score == pytest.approx(2.0)  # the weight times the leg's best score over itself
    assert other.fused_score == pytest.approx(2.0 * other.lexical_score / best.lexical_score)
    assert other.fused_score < best.fused_score
