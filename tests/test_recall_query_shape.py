"""Shape-aware fusion: a query's shape (app/recall/query_shape.py) scales the configured leg weights
when `query_shapes` is on, a request's own weights win leg by leg, and explain says which shape was
read and which weights were fused with (REST, MCP, UI)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from pydantic import ValidationError

from app.embeddings import LocalEmbedder
from app.factory import create_app
from app.graph.settings import GraphSettings
from app.mcp.render import recall_text
from app.recall.legs import LegPlan
from app.recall.query_shape import query_shape
from app.recall.schemas import EffectiveSettings, HitExplanation, LegWeights, RecallHit
from app.recall.settings import RecallSettings
from app.settings import Settings

GRAPH = GraphSettings()
SHAPES_ON = RecallSettings(query_shapes=True)


@pytest.mark.parametrize(
    ("query", "shape", "cue"),
    [
        ("Can you recommend a documentary for tonight?", "advice", "recommend"),
        ("I've been having trouble with my phone's battery lately. Any tips?", "advice", "tips"),
        ("I'm planning a trip to Denver. Any suggestions on what to do there?", "advice", "suggestions"),
        ("What should I cook for dinner with my homegrown tomatoes?", "advice", "should"),
        ("When did Nate win his second tournament?", "temporal", "when"),
        ("How many days ago did I buy the coffee maker?", "temporal", "days"),
        ("What did Jon do in June?", "temporal", "june"),
        ("Where did Gina work in 2019?", "temporal", "2019"),
        ("What are Joanna's hobbies?", "other", None),
        ("database connection pooling", "other", None),
        ("May I ask which cache we chose? It may matter.", "other", None),  # "may", the verb
    ],
)
def test_a_clear_query_reads_as_its_shape_with_the_word_that_decided_it(
    query: str, shape: str, cue: str | None
) -> None:
    found = query_shape(query)
    assert (found.name, found.cue) == (shape, cue)


def test_an_advice_word_said_of_someone_else_asks_for_a_fact_not_for_advice() -> None:
    assert query_shape("What did Caroline recommend to Melanie?").name == "other"
    assert query_shape("Which book did Caroline suggest?").name == "other"


def test_with_shapes_off_the_query_does_not_change_the_weights() -> None:
    shapes_off = RecallSettings(query_shapes=False)
    off = LegPlan.for_request(None, shapes_off, GRAPH, "Can you recommend a documentary?")
    plain = LegPlan.for_request(None, shapes_off, GRAPH)
    assert off.shape is None and off.weights == plain.weights
    assert set(off.sources.values()) == {"settings"}


def test_with_shapes_on_the_shape_scales_the_configured_weights() -> None:
    recall = RecallSettings(
        query_shapes=True, weight_dense=1.5, shape_leg_factors={"advice": {"dense": 2.0, "graph": 0.0}}
    )
    plan = LegPlan.for_request(None, recall, GRAPH, "Can you recommend a documentary?")
    assert plan.shape is not None and plan.shape.name == "advice"
    assert plan.weights == {"lexical": recall.weight_lexical, "dense": 3.0, "graph": 0.0}
    assert plan.sources == {"lexical": "settings", "dense": "shape", "graph": "shape"}
    # a shape without factors fuses with the configured weights
    other = LegPlan.for_request(None, recall, GRAPH, "What are Joanna's hobbies?")
    assert other.shape is not None and other.shape.name == "other"
    assert other.weights == LegPlan.for_request(None, recall, GRAPH).weights


def test_the_request_weights_win_over_the_shape_leg_by_leg() -> None:
    plan = LegPlan.for_request(LegWeights(dense=1.0), SHAPES_ON, GRAPH, "When did Nate win?")
    assert plan.shape is not None and plan.shape.name == "temporal"
    assert plan.weights["dense"] == 1.0 and plan.sources["dense"] == "request"
    assert plan.sources["lexical"] == "settings"


def test_shape_aware_fusion_is_on_by_default_and_a_plan_without_a_query_has_no_shape() -> None:
    assert RecallSettings().query_shapes
    assert LegPlan.for_request(None, RecallSettings(), GRAPH).shape is None


def test_the_default_factors_lean_advice_on_dense_and_temporal_on_lexical() -> None:
    advice = LegPlan.for_request(None, SHAPES_ON, GRAPH, "Any tips for my slow cooker?")
    temporal = LegPlan.for_request(None, SHAPES_ON, GRAPH, "When did I buy the coffee maker?")
    assert advice.weights["dense"] > advice.weights["lexical"]
    assert temporal.weights["dense"] < temporal.weights["lexical"]


def test_a_factor_out_of_range_or_an_unknown_shape_or_leg_is_refused() -> None:
    for factors in ({"advice": {"dense": 11.0}}, {"advise": {"dense": 2.0}}, {"advice": {"sparse": 2.0}}):
        with pytest.raises(ValidationError):
            RecallSettings.model_validate({"shape_leg_factors": factors})


def _settings(**changes: Any) -> EffectiveSettings:
    values: dict[str, Any] = {
        "rrf_k": 5,
        "leg_depth": 30,
        "weights": {"lexical": 1.0, "dense": 2.0, "graph": 0.25},
        "ef_search": 100,
        "iterative_scan": "relaxed_order",
        "lexical_mode": "websearch",
        "graph_max_hops": 2,
        "graph_hop_decay": 0.5,
        "graph_feedback_hits": 20,
        "fusion": "rrf",
        "query_shape": "advice",
        "query_shape_cue": "recommend",
        "weight_sources": {"lexical": "settings", "dense": "shape", "graph": "settings"},
    }
    return EffectiveSettings(**{**values, **changes})


def test_the_mcp_answer_of_an_explained_recall_says_the_shape_and_the_weights() -> None:
    hit = RecallHit(
        id=7,
        namespace="default",
        content="Alice loves nature documentaries",
        category=None,
        tags=[],
        importance=0.5,
        is_sensitive=False,
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        score=0.3,
        explain=HitExplanation(
            kind="memory",
            lexical_rank=None,
            dense_rank=1,
            graph_rank=None,
            graph_path=None,
            lexical_score=None,
            dense_distance=0.4,
            fused_score=0.33,
            final_score=0.3,
        ),
    )
    text = recall_text([hit], False, 500, 5000, _settings())
    assert (
        'fusion: query shape advice ("recommend"); weights lexical 1 (settings), dense 2 (shape), '
        "graph 0.25 (settings)"
    ) in text
    assert "fusion:" not in recall_text([hit], False, 500, 5000)
    off = _settings(query_shape=None, query_shape_cue=None, weight_sources={})
    assert "fusion: shape-aware fusion off; weights lexical 1 (settings)" in recall_text(
        [hit], False, 500, 5000, off
    )


@pytest.mark.parametrize("shapes", [True, False])
async def test_explain_says_which_shape_was_read_and_which_weights_were_fused_with(
    settings: Settings, embedder: LocalEmbedder, alice: dict[str, str], shapes: bool
) -> None:
    recall_settings = RecallSettings(query_shapes=shapes)
    app: Litestar = create_app(settings.model_copy(update={"recall": recall_settings}), embedder=embedder)
    async with AsyncTestClient(app=app) as client:
        body = [{"content": "Alice loves nature documentaries", "namespace": "n"}]
        assert (await client.post("/v1/memories", json=body, headers=alice)).status_code == 201
        query = {"query": "Can you recommend a documentary?", "namespace": "n", "explain": True}
        out = (await client.post("/v1/recall", json=query, headers=alice)).json()
        explained = out["settings"]
        if shapes:
            assert (explained["query_shape"], explained["query_shape_cue"]) == ("advice", "recommend")
            assert explained["weights"]["dense"] == 2 * recall_settings.weight_dense
            assert explained["weight_sources"]["dense"] == "shape"
        else:
            assert explained["query_shape"] is None and explained["query_shape_cue"] is None
            assert explained["weights"]["dense"] == recall_settings.weight_dense
            assert explained["weight_sources"]["dense"] == "settings"
        asked = {**query, "weights": {"dense": 0.5}}
        overridden = (await client.post("/v1/recall", json=asked, headers=alice)).json()["settings"]
        assert overridden["weights"]["dense"] == 0.5 and overridden["weight_sources"]["dense"] == "request"
