"""`Server-Timing`: with `MEMORIA_SERVER__SERVER_TIMING` on, a recall answers with the phases of its
time (authentication, transaction start, scope, embedding, SQL, commit, the whole app), which the
latency bench reads to print where a request's milliseconds go; off by default."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.core.timing import RequestTimings, parse_server_timing, record, timed
from app.embeddings import LocalEmbedder
from app.factory import create_app
from app.settings import Settings
from memoria_bench.latency.http import SEQUENTIAL_PHASES, median_split, request_split


@pytest.fixture
async def timed_client(
    settings: Settings, embedder: LocalEmbedder
) -> AsyncIterator[AsyncTestClient[Litestar]]:
    on = settings.model_copy(update={"server": settings.server.model_copy(update={"server_timing": True})})
    async with AsyncTestClient(app=create_app(on, embedder=embedder)) as client:
        yield client


async def test_a_recall_answers_with_the_phases_of_its_time(
    timed_client: AsyncTestClient[Litestar], alice: dict[str, str]
) -> None:
    stored = await timed_client.post(
        "/v1/memories",
        json={"content": "The boiler needs a yearly service.", "namespace": "n"},
        headers=alice,
    )
    assert stored.status_code == 201, stored.text
    response = await timed_client.post(
        "/v1/recall", json={"query": "boiler", "namespace": "n"}, headers=alice
    )
    assert response.status_code == 200, response.text
    phases = parse_server_timing(response.headers["server-timing"])
    assert set(phases) >= {"auth", "begin", "scope", "embed", "embed-wait", "sql", "commit", "app"}
    assert all(ms >= 0 for ms in phases.values())
    assert phases["app"] >= sum(phases[p] for p in SEQUENTIAL_PHASES)  # the whole holds its parts
    assert list(phases)[-1] == "app"


async def test_an_unauthenticated_request_still_says_how_long_authentication_took(
    timed_client: AsyncTestClient[Litestar],
) -> None:
    response = await timed_client.post(
        "/v1/recall", json={"query": "boiler"}, headers={"Authorization": "Bearer nope"}
    )
    assert response.status_code == 401
    assert set(parse_server_timing(response.headers["server-timing"])) == {"auth", "app"}


async def test_the_header_is_off_by_default(client: AsyncTestClient[Litestar], alice: dict[str, str]) -> None:
    response = await client.post("/v1/recall", json={"query": "boiler"}, headers=alice)
    assert response.status_code == 200, response.text
    assert "server-timing" not in response.headers


def test_recording_outside_a_request_does_nothing() -> None:
    record("sql", 1.0)  # no RequestTimings open: dropped, no error
    with timed("scope"):
        pass


def test_a_phase_recorded_twice_adds_up_and_the_header_parses_back() -> None:
    timings = RequestTimings()
    timings.add("sql", 1.5)
    timings.add("sql", 2.0)
    timings.add("auth", 0.25)
    phases = parse_server_timing(timings.header())
    assert list(phases) == ["sql", "auth", "app"]
    assert phases["sql"] == 3.5 and phases["auth"] == 0.25


def test_foreign_server_timing_entries_are_read_as_far_as_they_go() -> None:
    assert parse_server_timing('cache;desc="hit", db;dur=53, app;dur=x, ;dur=1') == {"db": 53.0}


def test_the_split_puts_what_no_phase_recorded_in_other_and_the_wire_in_outside() -> None:
    phases = {
        "auth": 1.0,
        "begin": 0.5,
        "scope": 0.5,
        "embed": 4.0,
        "embed-wait": 2.0,
        "sql": 6.0,
        "commit": 0.2,
    }
    split = request_split({**phases, "app": 11.0}, client_ms=12.5)
    assert split["other"] == pytest.approx(11.0 - 10.2)
    assert split["outside"] == pytest.approx(1.5) and split["embed"] == 4.0
    assert median_split([split, {**split, "sql": 8.0}])["sql"] == 7.0
    assert median_split([]) == {}
