"""`/metrics`: what a scrape shows after real requests through the app, and who may scrape it."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from prometheus_client.parser import text_string_to_metric_families
from pydantic import SecretStr

from app.embeddings import Embedder, EmbeddingError, LocalEmbedder
from app.factory import create_app
from app.observability.collectors import JOB_STATS_TIMEOUT_S
from app.settings import MetricsSettings, RecallSettings, Settings
from tests.fakes.embedders import ScriptedEmbedder

TOKEN = "scrape-token-0123456789abcdef"
SCRAPER = {"Authorization": f"Bearer {TOKEN}"}

Labels = frozenset[tuple[str, str]]


def _with_token(settings: Settings, **changes: object) -> Settings:
    return settings.model_copy(update={"metrics": MetricsSettings(token=SecretStr(TOKEN)), **changes})


@asynccontextmanager
async def _client(settings: Settings, embedder: Embedder) -> AsyncIterator[AsyncTestClient[Litestar]]:
    async with AsyncTestClient(app=create_app(settings, embedder=embedder)) as client:
        yield client


@dataclass(frozen=True)
class Scraped:
    samples: dict[tuple[str, Labels], float]

    def value(self, name: str, **labels: str) -> float:
        """The sample whose labels include `labels`; exactly one must match."""
        found = [
            value
            for (sample, have), value in self.samples.items()
            if sample == name and set(labels.items()) <= have
        ]
        assert len(found) == 1, f"{name}{labels}: {len(found)} samples"
        return found[0]

    def has(self, name: str, **labels: str) -> bool:
        return any(sample == name and set(labels.items()) <= have for sample, have in self.samples)


async def _scrape(client: AsyncTestClient[Litestar]) -> Scraped:
    response = await client.get("/metrics", headers=SCRAPER)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    return Scraped(
        {
            (sample.name, frozenset(sample.labels.items())): sample.value
            for family in text_string_to_metric_families(response.text)
            for sample in family.samples
        }
    )


async def test_a_scrape_after_a_store_and_a_recall_shows_their_routes_legs_pools_and_jobs(
    settings: Settings, embedder: LocalEmbedder, alice: dict[str, str]
) -> None:
    async with _client(_with_token(settings), embedder) as client:
        stored = await client.post(
            "/v1/memories",
            json={"content": "We deploy with Terraform; never kubectl apply by hand.", "namespace": "ops"},
            headers=alice,
        )
        assert stored.status_code == 201, stored.text
        recalled = await client.post(
            "/v1/recall",
            json={"query": "how do we deploy with terraform?", "namespace": "ops", "explain": True},
            headers=alice,
        )
        assert recalled.status_code == 200, recalled.text
        [hit] = recalled.json()["results"]
        scraped = await _scrape(client)

    request_count = "memoria_http_request_duration_seconds_count"
    assert scraped.value(request_count, route="/v1/memories", method="POST", status="2xx") == 1
    assert scraped.value(request_count, route="/v1/recall", method="POST", status="2xx") == 1
    assert scraped.value("memoria_recall_duration_seconds_count") == 1
    assert scraped.value("memoria_recall_results_total") == 1
    for leg in ("lexical", "dense", "graph"):
        ranked = hit["explain"][f"{leg}_rank"] is not None
        assert scraped.value("memoria_recall_leg_hits_total", leg=leg) == int(ranked)
    assert scraped.value("memoria_recall_leg_hits_total", leg="lexical") == 1
    assert scraped.value("memoria_recall_degraded_total") == 0

    in_use = scraped.value("memoria_db_pool_connections", pool="write", state="in_use")
    idle = scraped.value("memoria_db_pool_connections", pool="write", state="idle")
    assert in_use + idle >= 1
    assert scraped.value("memoria_db_pool_max_connections", pool="write") == settings.database.pool_max_size
    assert not scraped.has("memoria_db_pool_connections", pool="read")  # no read URL: one pool

    model = embedder.model_id
    assert scraped.value("memoria_embedding_duration_seconds_count", model=model, op="query") == 1
    assert scraped.value("memoria_embedding_errors_total", model=model, op="query") == 0

    assert scraped.value("memoria_jobs_stats_up") == 1
    for state in ("queued", "running", "failed"):  # every kind the worker runs, even with no jobs
        assert scraped.has("memoria_jobs", kind="graph.index", state=state)
    assert scraped.has("memoria_jobs_oldest_due_age_seconds", kind="graph.index")


async def test_a_scrape_while_the_job_table_is_locked_answers_in_time_without_the_job_gauges(
    settings: Settings, embedder: LocalEmbedder, conn: asyncpg.Connection
) -> None:
    async with _client(_with_token(settings), embedder) as client:
        async with conn.transaction():
            await conn.execute("LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE")
            started = time.monotonic()
            locked = await _scrape(client)
            elapsed = time.monotonic() - started
        released = await _scrape(client)
    assert elapsed < JOB_STATS_TIMEOUT_S + 1.0
    assert locked.value("memoria_jobs_stats_up") == 0
    assert not locked.has("memoria_jobs")
    assert locked.has("memoria_db_pool_connections", pool="write", state="idle")  # the rest is served
    assert released.value("memoria_jobs_stats_up") == 1
    assert released.has("memoria_jobs", kind="graph.index", state="queued")


async def test_metrics_is_refused_without_the_token(settings: Settings, embedder: LocalEmbedder) -> None:
    async with _client(_with_token(settings), embedder) as client:
        assert (await client.get("/metrics")).status_code == 401
        wrong = {"Authorization": f"Bearer {TOKEN[:-1]}x"}
        assert (await client.get("/metrics", headers=wrong)).status_code == 401
        basic = {"Authorization": f"Basic {TOKEN}"}
        assert (await client.get("/metrics", headers=basic)).status_code == 401
        assert (await client.get("/metrics", headers=SCRAPER)).status_code == 200


async def test_a_scraper_asking_for_openmetrics_gets_openmetrics(
    settings: Settings, embedder: LocalEmbedder
) -> None:
    async with _client(_with_token(settings), embedder) as client:
        accept = {"Accept": "application/openmetrics-text; version=1.0.0; charset=utf-8", **SCRAPER}
        response = await client.get("/metrics", headers=accept)
    assert response.headers["content-type"].startswith("application/openmetrics-text; version=1.0.0")
    assert response.text.endswith("# EOF\n")


async def test_metrics_is_not_served_when_no_token_is_configured(client: AsyncTestClient[Litestar]) -> None:
    assert (await client.get("/metrics", headers=SCRAPER)).status_code == 404


def test_a_short_metrics_token_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 16"):
        MetricsSettings(token=SecretStr("short"))


async def test_unmatched_and_refused_requests_are_timed_by_status_class(
    settings: Settings, embedder: LocalEmbedder
) -> None:
    async with _client(_with_token(settings), embedder) as client:
        assert (await client.get("/no/such/route")).status_code == 404
        assert (await client.get("/v1/memories/7")).status_code == 401  # no key
        scraped = await _scrape(client)
    count = "memoria_http_request_duration_seconds_count"
    assert scraped.value(count, route="unmatched", method="GET", status="4xx") == 1
    # the route template, never the path: ids do not become label values
    assert scraped.value(count, route="/v1/memories/{memory_id}", method="GET", status="4xx") == 1


async def test_a_recall_without_its_query_vector_counts_as_degraded_and_as_an_embedding_error(
    settings: Settings, embedder: LocalEmbedder, alice: dict[str, str]
) -> None:
    async with _client(
        _with_token(settings), ScriptedEmbedder(embedder, error=EmbeddingError("provider unreachable"))
    ) as client:
        await client.post(
            "/v1/memories", json={"content": "the boiler needs a yearly service"}, headers=alice
        )
        recalled = await client.post("/v1/recall", json={"query": "boiler service"}, headers=alice)
        assert recalled.json()["degraded"] is True
        scraped = await _scrape(client)
    assert scraped.value("memoria_recall_degraded_total") == 1
    assert scraped.value("memoria_embedding_errors_total", op="query") == 1
    assert scraped.value("memoria_recall_leg_hits_total", leg="dense") == 0
    assert scraped.value("memoria_recall_leg_hits_total", leg="lexical") == 1


async def test_short_recalls_are_counted_only_from_a_scope_known_to_hold_more(
    settings: Settings, embedder: LocalEmbedder, alice: dict[str, str]
) -> None:
    # four memories make a "big" scope once EXACT_SCAN_BELOW is 3: it is known to hold at least 3
    big_at_three = _with_token(
        settings, recall=RecallSettings(exact_scan_below=3, exact_scan_per_sqrt_rows=0)
    )
    contents = [
        ("the boiler needs a yearly service", "house"),
        ("water the tomatoes every evening", "garden"),
        ("the car insurance renews in March", "car"),
        ("the bike chain wants oil every month", "bike"),
    ]
    async with _client(big_at_three, embedder) as client:
        for content, category in contents:
            stored = await client.post(
                "/v1/memories",
                json={"content": content, "category": category, "namespace": "home"},
                headers=alice,
            )
            assert stored.status_code == 201, stored.text

        async def recall(**body: object) -> int:
            response = await client.post("/v1/recall", json={"namespace": "home", **body}, headers=alice)
            assert response.status_code == 200, response.text
            return len(response.json()["results"])

        # every leg: the dense leg ranks the whole scope, 4 hits, not short
        assert await recall(query="boiler") == 4
        # the lexical leg alone finds one memory: short
        assert await recall(query="boiler", weights={"dense": 0, "graph": 0}) == 1
        # a category filter narrows the scope to one memory: short, and marked as filtered
        assert await recall(query="boiler", filters={"category": "house"}) == 1
        # a limit the answer fills is never short
        assert await recall(query="boiler", weights={"dense": 0, "graph": 0}, limit=1) == 1
        scraped = await _scrape(client)
    assert scraped.value("memoria_recall_short_total", filtered="false") == 1
    assert scraped.value("memoria_recall_short_total", filtered="true") == 1
    assert scraped.value("memoria_recall_duration_seconds_count") == 4


async def test_a_small_scope_never_counts_as_short(
    settings: Settings, embedder: LocalEmbedder, alice: dict[str, str]
) -> None:
    async with _client(_with_token(settings), embedder) as client:  # EXACT_SCAN_BELOW 8000
        await client.post(
            "/v1/memories", json={"content": "the boiler needs a yearly service"}, headers=alice
        )
        await client.post("/v1/memories", json={"content": "water the tomatoes every evening"}, headers=alice)
        response = await client.post(
            "/v1/recall", json={"query": "boiler", "weights": {"dense": 0, "graph": 0}}, headers=alice
        )
        assert len(response.json()["results"]) == 1
        scraped = await _scrape(client)
    assert scraped.value("memoria_recall_short_total", filtered="false") == 0


async def test_two_apps_in_one_process_keep_separate_metrics(
    settings: Settings, embedder: LocalEmbedder, alice: dict[str, str]
) -> None:
    async with _client(_with_token(settings), embedder) as first:
        await first.post("/v1/recall", json={"query": "anything"}, headers=alice)
        async with _client(_with_token(settings), embedder) as second:
            scraped = await _scrape(second)
    assert scraped.value("memoria_recall_duration_seconds_count") == 0
