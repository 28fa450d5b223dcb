"""POST /v1/recall: lexical and dense legs fused by weighted RRF, scoped, filtered, explainable."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.embeddings import LocalEmbedder
from app.factory import create_app
from app.settings import RecallSettings, Settings

Client = AsyncTestClient[Litestar]

CORPUS: list[dict[str, Any]] = [
    {"content": "The CI pipeline runs on GitHub Actions with a matrix of Python versions", "tags": ["ci"]},
    {"content": "Alice prefers tabs over spaces in every Go file", "category": "preference"},
    {
        "content": "Production database is PostgreSQL 16 on CloudNativePG",
        "category": "fact",
        "importance": 0.9,
    },
    {
        "content": "To rotate the API key, run memoria keys create then revoke the old one",
        "category": "runbook",
    },
    {"content": "The team decided to use Terraform for all infrastructure changes", "category": "decision"},
    {"content": "Our canine companion is a golden retriever called Biscuit", "tags": ["pets"]},
]


async def seed(client: Client, headers: dict[str, str], namespace: str = "proj") -> dict[str, int]:
    body = [{**m, "namespace": namespace} for m in CORPUS]
    results = (await client.post("/v1/memories", json=body, headers=headers)).json()["results"]
    return {m["content"]: r["id"] for m, r in zip(CORPUS, results, strict=True)}


async def recall(client: Client, headers: dict[str, str], **body: Any) -> dict[str, Any]:
    response = await client.post("/v1/recall", json=body, headers=headers)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def test_lexical_match_ranks_first(client: Client, alice: dict[str, str]) -> None:
    ids = await seed(client, alice)
    out = await recall(client, alice, query="GitHub Actions pipeline", namespace="proj", explain=True)
    top = out["results"][0]
    assert top["id"] == ids[CORPUS[0]["content"]]
    assert top["explain"]["lexical_rank"] == 1 and top["explain"]["dense_rank"] is not None
    assert out["legs"] == {"lexical": "ok", "dense": "ok", "graph": "ok"} and out["degraded"] is False


async def test_dense_leg_finds_meaning_without_shared_words(client: Client, alice: dict[str, str]) -> None:
    ids = await seed(client, alice)
    out = await recall(client, alice, query="what kind of dog do we have?", namespace="proj", explain=True)
    nearest = next(h for h in out["results"] if h["explain"]["dense_rank"] == 1)
    assert nearest["id"] == ids[CORPUS[5]["content"]]
    assert nearest["explain"]["lexical_rank"] is None
    # equal importance: the nearest memory also ranks first overall
    plain = await recall(
        client, alice, query="what kind of dog do we have?", filters={"tags": ["pets", "ci"]}
    )
    assert plain["results"][0]["id"] == ids[CORPUS[5]["content"]]


async def test_broadening_matches_questions_whose_words_do_not_all_occur(
    client: Client, alice: dict[str, str]
) -> None:
    ids = await seed(client, alice)
    out = await recall(
        client,
        alice,
        query="which Terraform modules did Bob write",
        namespace="proj",
        weights={"dense": 0, "graph": 0},
        explain=True,
    )
    assert [r["id"] for r in out["results"]] == [ids[CORPUS[4]["content"]]]
    assert out["legs"]["dense"] == "off"


async def test_expanded_query_feeds_the_lexical_leg(client: Client, alice: dict[str, str]) -> None:
    ids = await seed(client, alice)
    out = await recall(
        client,
        alice,
        query="database engine",
        expanded_query="postgresql cloudnativepg",
        namespace="proj",
        weights={"dense": 0, "graph": 0},
    )
    assert out["results"][0]["id"] == ids[CORPUS[2]["content"]]


async def test_explain_reports_fusion_arithmetic_and_settings(client: Client, alice: dict[str, str]) -> None:
    await seed(client, alice)
    out = await recall(client, alice, query="rotate API key", namespace="proj", explain=True)
    settings = out["settings"]
    assert settings["rrf_k"] == 5 and settings["ef_search"] == 100 and settings["leg_depth"] == 30
    assert settings["fusion"] == "rrf" and settings["graph_feedback_hits"] == 20
    weights = settings["weights"]
    assert weights["lexical"] == 1.0 and weights["dense"] == 1.0 and weights["graph"] > 0
    for hit in out["results"]:
        e = hit["explain"]
        expected = sum(
            weights[leg] / (settings["rrf_k"] + e[f"{leg}_rank"])
            for leg in ("lexical", "dense", "graph")
            if e[f"{leg}_rank"] is not None
        )
        assert e["fused_score"] == pytest.approx(expected)
        assert e["final_score"] == pytest.approx(expected * (0.7 + 0.3 * hit["importance"]), rel=1e-5)
        assert hit["score"] == e["final_score"]
    scores = [h["score"] for h in out["results"]]
    assert scores == sorted(scores, reverse=True)


async def test_weights_shift_the_fusion(client: Client, alice: dict[str, str]) -> None:
    await seed(client, alice)
    lexical_only = await recall(
        client, alice, query="golden retriever", weights={"dense": 0, "graph": 0}, explain=True
    )
    assert all(h["explain"]["dense_rank"] is None for h in lexical_only["results"])
    assert all(h["explain"]["graph_rank"] is None for h in lexical_only["results"])
    dense_only = await recall(
        client, alice, query="golden retriever", weights={"lexical": 0, "graph": 0}, explain=True
    )
    assert all(h["explain"]["lexical_rank"] is None for h in dense_only["results"])
    assert len(dense_only["results"]) == len(CORPUS)


async def test_importance_prior_and_sort_orders(client: Client, alice: dict[str, str]) -> None:
    await seed(client, alice)
    by_importance = await recall(client, alice, query="infrastructure database", sort="importance", limit=3)
    importances = [h["importance"] for h in by_importance["results"]]
    assert importances == sorted(importances, reverse=True)
    by_recency = await recall(client, alice, query="infrastructure database", sort="recency", limit=3)
    stamps = [h["created_at"] for h in by_recency["results"]]
    assert stamps == sorted(stamps, reverse=True)


async def test_recall_is_scoped_to_the_callers_namespaces(
    client: Client, alice: dict[str, str], bob: dict[str, str]
) -> None:
    await seed(client, alice, namespace="a1")
    await client.post(
        "/v1/memories",
        json={"content": "GitHub Actions in another namespace", "namespace": "a2"},
        headers=alice,
    )
    scoped = await recall(client, alice, query="GitHub Actions", namespace="a2")
    assert {h["namespace"] for h in scoped["results"]} == {"a2"}
    both = await recall(client, alice, query="GitHub Actions", namespaces=["a1", "a2"])
    assert {h["namespace"] for h in both["results"]} == {"a1", "a2"}
    assert (await recall(client, bob, query="GitHub Actions"))["results"] == []
    missing = await client.post("/v1/recall", json={"query": "x", "namespace": "a1"}, headers=bob)
    assert missing.status_code == 404


async def test_filters_apply_to_every_leg(client: Client, alice: dict[str, str]) -> None:
    ids = await seed(client, alice)
    out = await recall(client, alice, query="anything at all", filters={"category": "runbook"})
    assert [h["id"] for h in out["results"]] == [ids[CORPUS[3]["content"]]]
    out = await recall(client, alice, query="pets", filters={"tags": ["pets", "ci"], "tags_match": "any"})
    assert {h["id"] for h in out["results"]} == {ids[CORPUS[0]["content"]], ids[CORPUS[5]["content"]]}
    out = await recall(client, alice, query="pets", filters={"created_until": "2000-01-01T00:00:00Z"})
    assert out["results"] == []


async def test_sensitive_and_deleted_memories_stay_out_unless_asked(
    client: Client, alice: dict[str, str]
) -> None:
    secret = (
        await client.post(
            "/v1/memories", json={"content": "vault token is s3cr3t", "is_sensitive": True}, headers=alice
        )
    ).json()
    gone = (await client.post("/v1/memories", json={"content": "vault was replaced"}, headers=alice)).json()
    await client.delete(f"/v1/memories/{gone['id']}", headers=alice)
    assert (await recall(client, alice, query="vault token"))["results"] == []
    shown = await recall(client, alice, query="vault token", filters={"include_sensitive": True})
    assert [h["id"] for h in shown["results"]] == [secret["id"]]


@pytest.mark.parametrize(
    "query",
    ['"unbalanced', "a & b | !c", "foo:* (bar", "'; DROP TABLE memories; --", "!!!", ")(", "-", "or or or"],
)
async def test_hostile_query_text_is_never_a_syntax_error(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection, query: str
) -> None:
    await seed(client, alice)
    out = await recall(client, alice, query=query, expanded_query=query)
    assert isinstance(out["results"], list)
    assert await conn.fetchval("SELECT count(*) FROM memories") == len(CORPUS)


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({}, 422),
        ({"query": ""}, 422),
        ({"query": "   "}, 422),
        ({"query": "x", "limit": 0}, 422),
        ({"query": "x", "limit": 101}, 422),
        ({"query": "x", "weights": {"lexical": -1}}, 422),
        ({"query": "x", "weights": {"lexical": 0, "dense": 0, "graph": 0}}, 422),
        ({"query": "x", "sort": "random"}, 422),
        ({"query": "x", "namespace": "bad name"}, 422),
        ({"query": "a\u0000b"}, 422),
        ({"query": "x", "filters": {"colour": 1}}, 422),
        ({"query": "x", "namespace": "nope"}, 404),
    ],
)
async def test_bad_recall_requests_are_4xx(
    client: Client, alice: dict[str, str], body: dict[str, Any], status: int
) -> None:
    response = await client.post("/v1/recall", json=body, headers=alice)
    assert response.status_code == status, response.text
    assert response.json()["detail"]


async def test_recall_needs_a_key(client: Client) -> None:
    assert (await client.post("/v1/recall", json={"query": "x"})).status_code == 401


async def test_common_lexemes_rank_or_matches_but_pick_them_only_when_rarer_ones_come_back_short(
    settings: Settings, embedder: LocalEmbedder, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    recall_settings = RecallSettings(common_lexeme_fraction=0.5, leg_depth=5)
    app = create_app(settings.model_copy(update={"recall": recall_settings}), embedder=embedder)
    routine = [{"content": f"Routine check {i} of the boiler", "namespace": "n"} for i in range(10)]
    zeppelin = [{"content": f"Zeppelin model {i} sits on the shelf", "namespace": "n"} for i in range(6)]
    async with AsyncTestClient(app=app) as client:
        stored = (await client.post("/v1/memories", json=routine + zeppelin, headers=alice)).json()
        routine_ids = {r["id"] for r in stored["results"][:10]}
        await conn.execute("ANALYZE memories")
        common = await conn.fetchval(
            "SELECT most_common_elems::text::text[] FROM pg_stats "
            "WHERE tablename = 'memories' AND attname = 'search_vector'"
        )
        assert "routin" in common and "zeppelin" in common  # the planner saw both ...
        lexical_only = {"dense": 0, "graph": 0}
        # ... but only "routin" is in more than half the rows: the zeppelins fill the leg on their own
        # (a limit no higher than the leg depth: a higher one deepens every leg to fill it)
        rare_enough = await recall(client, alice, query="zeppelin routine", weights=lexical_only, limit=5)
        assert not routine_ids & {h["id"] for h in rare_enough["results"]}
        assert len(rare_enough["results"]) == 5
        # asked for more than the leg depth, the leg reads deeper and broadens to the common word
        deeper = await recall(client, alice, query="zeppelin routine", weights=lexical_only, limit=12)
        assert len(deeper["results"]) == 12 and routine_ids & {h["id"] for h in deeper["results"]}
        # a rarer lexeme that matches nothing does not hide the common one's matches
        rare_missing = await recall(client, alice, query="quokka routine", weights=lexical_only, limit=20)
        assert {h["id"] for h in rare_missing["results"]} <= routine_ids and rare_missing["results"]
