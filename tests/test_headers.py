"""Every answer carries the security headers, whoever produced it: a route, the API-key middleware,
the router's 404 for an unknown path, the docs, the probes, `/metrics`. Every `/v1` answer (memory
content, recall results, errors) is `Cache-Control: no-store`."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from pydantic import SecretStr

from app.embeddings import LocalEmbedder
from app.factory import create_app
from app.observability import MetricsSettings
from app.settings import Settings

Client = AsyncTestClient[Litestar]
METRICS_TOKEN = "scrape-token-0123456789"

ALWAYS = {
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
}


@pytest.fixture
async def metered_client(settings: Settings, embedder: LocalEmbedder) -> AsyncIterator[Client]:
    """The app with `/metrics` served (it is only with a token)."""
    tuned = settings.model_copy(update={"metrics": MetricsSettings(token=SecretStr(METRICS_TOKEN))})
    async with AsyncTestClient(app=create_app(tuned, embedder=embedder)) as client:
        yield client


def assert_always(response: httpx.Response) -> None:
    for name, value in ALWAYS.items():
        assert response.headers.get(name) == value, (response.request.url, name, response.headers)


def assert_not_stored(response: httpx.Response) -> None:
    assert response.headers.get("cache-control") == "no-store", (response.request.url, response.headers)
    assert response.headers.get("content-security-policy", "").startswith("default-src 'none'")


async def test_every_kind_of_answer_carries_nosniff_and_the_frame_and_referrer_policies(
    metered_client: Client, alice: dict[str, str]
) -> None:
    client = metered_client
    answers = [
        await client.get("/healthz"),
        await client.get("/readyz"),
        await client.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}),
        await client.get("/schema"),
        await client.get("/schema/swagger"),
        await client.get("/schema/openapi.json"),
        await client.get("/no/such/path"),
        await client.get("/v1/no-such-route", headers=alice),
        await client.get("/v1/memories"),  # no key: the API-key middleware's 401
        await client.get("/v1/memories", headers=alice),
        await client.post("/v1/memories", headers=alice, content=b"{not json"),
        await client.put("/healthz"),  # 405
    ]
    assert [a.status_code for a in answers] == [200, 200, 200, 200, 200, 200, 404, 404, 401, 200, 400, 405]
    for answer in answers:
        assert_always(answer)


async def test_every_v1_answer_is_no_store_memories_recall_and_errors_alike(
    client: Client, alice: dict[str, str], bob: dict[str, str]
) -> None:
    stored = await client.post(
        "/v1/memories",
        headers=alice,
        json={"content": "The staging database is db-stage-2", "namespace": "ops"},
    )
    assert stored.status_code == 201, stored.text
    memory_id = stored.json()["id"]
    answers = [
        stored,
        await client.get(f"/v1/memories/{memory_id}", headers=alice),
        await client.get("/v1/memories", headers=alice),
        await client.post(
            "/v1/recall", headers=alice, json={"query": "staging database", "namespace": "ops"}
        ),
        await client.get("/v1/namespaces", headers=alice),
        await client.get(f"/v1/memories/{memory_id}", headers=bob),  # another user's: 404
        await client.get("/v1/memories", headers={"Authorization": "Bearer not-a-key"}),  # 401
        await client.post("/v1/memories", headers=alice, json={"content": ""}),  # 422
        await client.get("/v1/no-such-route", headers=alice),  # the router's 404
    ]
    assert [a.status_code for a in answers] == [201, 200, 200, 200, 200, 404, 401, 422, 404]
    assert "db-stage-2" in answers[1].text  # a memory's content is among what is kept out of caches
    for answer in answers:
        assert_not_stored(answer)
        assert_always(answer)


async def test_the_probes_are_not_cached_either(client: Client) -> None:
    for path in ("/healthz", "/readyz"):
        assert_not_stored(await client.get(path))


async def test_litestars_own_options_answer_gets_the_api_headers(
    client: Client, alice: dict[str, str]
) -> None:
    answer = await client.options("/v1/memories", headers=alice)
    assert answer.status_code == 204
    assert_not_stored(answer)
    assert_always(answer)
