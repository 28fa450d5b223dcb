"""Deadlines against a real PostgreSQL: a hung backend, a held lock, a server that never answers.

A backend of the test server is hung with SIGSTOP (the pool's only connection, so every request of
the app under test goes through it) and always resumed in a `finally`. Times are measured around the
request in the client; the bars are the configured deadline or budget plus 0.2 s.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import asyncpg
import psycopg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.core import deadline
from app.db import create_database
from app.embeddings import LocalEmbedder
from app.errors import database_unavailable
from app.factory import create_app
from app.hooks.routes import OUTCOME_HEADER
from app.settings import DatabaseSettings, HookSettings, JobSettings, RecallSettings, ServerSettings, Settings

Client = AsyncTestClient[Litestar]
HOOK = "/v1/hooks/claude-code/user-prompt-submit"
SLACK_S = 0.2  # the bar: an answer may come this much after its deadline or budget


@contextmanager
def stopped(pid: int) -> Iterator[None]:
    """The process `pid` hung (SIGSTOP) for the block, resumed whatever happens."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def tuned(settings: Settings, **sections: Any) -> Settings:
    """The test settings with one connection (so the hung backend is the app's only one), no
    background jobs or warm-up competing for it, and `sections` merged in."""
    database = settings.database.model_copy(
        update={"pool_min_size": 1, "pool_max_size": 1, "warmup_timeout_s": 0, **sections.pop("database", {})}
    )
    return settings.model_copy(update={"database": database, "jobs": JobSettings(workers=0), **sections})


@pytest.fixture
async def hung_app_client(
    request: pytest.FixtureRequest, settings: Settings, embedder: LocalEmbedder
) -> AsyncIterator[Client]:
    """The app with `tuned` settings; a test's `sections` come from `@pytest.mark.parametrize`."""
    sections: dict[str, Any] = getattr(request, "param", {})
    app = create_app(tuned(settings, **sections), embedder=embedder)
    async with AsyncTestClient(app=app) as client:
        yield client


async def backend_pid(client: Client) -> int:
    """The backend behind the app's one pooled connection (asked on the app's own event loop: the
    test client runs the app in a portal thread)."""
    pool = client.app.state.db.write
    pid: int = await asyncio.to_thread(
        lambda: client.blocking_portal.call(pool.fetchval, "SELECT pg_backend_pid()")
    )
    return pid


async def timed(client: Client, method: str, url: str, **kwargs: Any) -> tuple[Any, float]:
    start = time.monotonic()
    response = await client.request(method, url, **kwargs)
    return response, time.monotonic() - start


# --- the primitives ---------------------------------------------------------------------------------


async def test_within_answers_at_the_deadline_while_the_work_still_unwinds() -> None:
    release = asyncio.Event()
    unwound = asyncio.Event()

    async def work() -> None:
        try:
            await asyncio.sleep(60)
        finally:  # clean-up that waits, like a ROLLBACK on a hung server
            await asyncio.shield(release.wait())
            unwound.set()

    start = time.monotonic()
    with pytest.raises(TimeoutError):
        await deadline.within(work(), deadline.Deadline.after(0.1))
    assert time.monotonic() - start < 0.1 + SLACK_S
    assert not unwound.is_set()  # still unwinding, in the background
    release.set()
    await asyncio.wait_for(unwound.wait(), 5)


async def test_pool_acquire_waits_no_longer_than_the_request_deadline(db_url: str) -> None:
    db = await create_database(db_url, DatabaseSettings(url=db_url, pool_min_size=1, pool_max_size=1))
    try:
        async with db.write.acquire():  # the only connection is busy
            start = time.monotonic()
            with deadline.bounded_by(deadline.Deadline.after(0.2)), pytest.raises(TimeoutError):
                async with asyncio.timeout(5), db.write.acquire():  # the outer 5 s only stops a hang
                    pass
            waited = time.monotonic() - start
        assert 0.15 < waited < 0.2 + SLACK_S
    finally:
        await db.close()


async def test_a_server_that_accepts_and_never_answers_costs_the_connect_timeout() -> None:
    """What a stopped postmaster looks like to a new connection: the socket opens, nothing follows."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        url = f"postgresql://memoria@127.0.0.1:{listener.getsockname()[1]}/memoria"
        settings = DatabaseSettings(url=url, pool_min_size=0, connect_timeout_s=0.3)
        db = await create_database(url, settings)
        try:
            start = time.monotonic()
            with pytest.raises(TimeoutError):
                await db.write.fetchval("SELECT 1")
            assert time.monotonic() - start < 0.3 + SLACK_S
        finally:
            db.write.terminate()


async def test_a_statement_cancelled_on_a_hung_backend_gives_its_connection_up_at_once(db_url: str) -> None:
    """What a request cut off at its deadline leaves behind: asyncpg would wait for the hung server
    to acknowledge the cancel before releasing (up to the acquire's timeout, here 5 s), holding the
    pool's one connection; the pool closes it instead, and the next acquire opens a new one."""
    settings = DatabaseSettings(url=db_url, pool_min_size=1, pool_max_size=1, acquire_timeout_s=5)
    db = await create_database(db_url, settings)
    try:
        pid: int = await db.write.fetchval("SELECT pg_backend_pid()")
        with stopped(pid):
            work = asyncio.ensure_future(db.write.fetchval("SELECT 1"))
            await asyncio.sleep(0.2)  # the statement is out, waiting on the stopped backend
            assert not work.done()
            start = time.monotonic()
            work.cancel()
            with pytest.raises(asyncio.CancelledError):
                await work
            unwound = time.monotonic() - start
            replacement: int = await asyncio.wait_for(db.write.fetchval("SELECT pg_backend_pid()"), 5)
        assert unwound < SLACK_S
        assert replacement != pid
    finally:
        await asyncio.wait_for(db.close(), 10)


async def test_connection_failures_are_the_databases_and_other_errors_are_bugs(
    conn: asyncpg.Connection, tmp_path: Path
) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # bound, never listening: connecting is refused
        with pytest.raises(ConnectionRefusedError) as refused:
            await asyncpg.connect(f"postgresql://memoria@127.0.0.1:{port}/memoria", timeout=5)
    await conn.execute("SET statement_timeout = 10")
    with pytest.raises(asyncpg.QueryCanceledError) as cancelled:
        await conn.execute("SELECT pg_sleep(1)")
    await conn.execute("RESET statement_timeout")
    with pytest.raises(asyncpg.UniqueViolationError) as duplicate:
        await conn.execute("INSERT INTO users (name) VALUES ('twice'), ('twice')")
    with pytest.raises(FileNotFoundError) as missing:
        (tmp_path / "absent").read_text()

    assert database_unavailable(refused.value) is not None
    assert database_unavailable(cancelled.value) is not None
    assert database_unavailable(duplicate.value) is None
    assert database_unavailable(missing.value) is None


# --- routes with a hung database -----------------------------------------------------------------


@pytest.mark.parametrize(
    "hung_app_client", [{"server": ServerSettings(request_deadline_ms=500)}], indirect=True
)
async def test_a_route_whose_database_hangs_answers_503_with_retry_after_within_its_deadline(
    hung_app_client: Client, alice: dict[str, str]
) -> None:
    client = hung_app_client
    assert (await client.get("/v1/memories", headers=alice)).status_code == 200
    with stopped(await backend_pid(client)):
        response, took = await timed(client, "GET", "/v1/memories", headers=alice)
    assert response.status_code == 503, response.text
    assert took < 0.5 + SLACK_S
    assert response.headers["retry-after"] == "1"
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["status"] == 503
    again, _ = await timed(client, "GET", "/v1/memories", headers=alice)  # resumed: served again
    assert again.status_code == 200, again.text


@pytest.mark.parametrize(
    "hung_app_client",
    [
        {
            "server": ServerSettings(request_deadline_ms=500, write_deadline_ms=30_000),
            "database": {"command_timeout_s": 1.5},
        }
    ],
    indirect=True,
)
async def test_a_store_while_the_database_hangs_answers_503_once_its_statement_times_out(
    hung_app_client: Client, alice: dict[str, str]
) -> None:
    # a store runs under the write deadline (it embeds what it writes): on a hung database its first
    # statement's `COMMAND_TIMEOUT_S` is what answers (the bound docs/operate/failure-behaviour.md gives)
    client = hung_app_client
    warm = await client.post("/v1/memories", json={"content": "Deploys run from main"}, headers=alice)
    assert warm.status_code == 201, warm.text
    with stopped(await backend_pid(client)):
        response, took = await timed(
            client, "POST", "/v1/memories", json={"content": "Rollbacks use the last tag"}, headers=alice
        )
    assert response.status_code == 503, response.text
    assert response.headers["retry-after"] == "1"
    assert 0.5 < took < 1.5 + SLACK_S


@pytest.mark.parametrize(
    "hung_app_client",
    [{"server": ServerSettings(request_deadline_ms=5000), "hooks": HookSettings(budget_ms=300)}],
    indirect=True,
)
async def test_the_hook_answers_empty_within_its_budget_when_the_key_lookup_hangs(
    hung_app_client: Client, alice: dict[str, str], tmp_path: Path
) -> None:
    client = hung_app_client
    event = {"hook_event_name": "UserPromptSubmit", "prompt": "How do we deploy the service?", "cwd": "/"}
    with stopped(await backend_pid(client)):
        response, took = await timed(client, "POST", HOOK, json=event, headers=alice)
    assert response.status_code == 200, response.text
    assert response.json() == {}
    assert response.headers[OUTCOME_HEADER] == "timeout"  # the hook's own budget, not the request deadline
    assert took < 0.3 + SLACK_S


async def test_an_unknown_key_on_the_hook_answers_empty_not_401(hung_app_client: Client) -> None:
    """Claude Code shows any non-2xx answer as a hook error on every prompt: a bad key is `{}`."""
    event = {"hook_event_name": "UserPromptSubmit", "prompt": "How do we deploy the service?"}
    response = await hung_app_client.post(HOOK, json=event, headers={"Authorization": "Bearer mem_nope"})
    assert response.status_code == 200
    assert response.json() == {}
    assert response.headers[OUTCOME_HEADER] == "unauthorized"


async def test_readyz_answers_within_a_second_naming_a_hung_database(
    hung_app_client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    client = hung_app_client
    await conn.execute("UPDATE api_keys SET scopes = '{read,write,admin}'")  # the details need an admin key
    assert (await client.get("/readyz", headers=alice)).status_code == 200  # the key is confirmed admin
    with stopped(await backend_pid(client)):
        response, took = await timed(client, "GET", "/readyz", headers=alice)
        live, _ = await timed(client, "GET", "/healthz")
    assert response.status_code == 503
    assert took < 1.0
    assert response.json()["checks"]["database"].startswith("hung")
    assert live.status_code == 200  # liveness never asks the database


# --- recall past its statement_timeout ----------------------------------------------------------


@contextmanager
def concepts_locked(db_url: str, *, release_at_waiters: int | None = None) -> Iterator[None]:
    """`concepts` locked by another transaction for the block: the recall statement reads it, so it
    waits (its statement_timeout counting the wait); nothing recall runs before it touches the table.

    The lock is held from a thread, because the test client blocks the test's event loop while a
    request runs. With `release_at_waiters`, the lock goes as soon as that many distinct statements
    have queued behind it (bounded: at most 10 s).
    """
    locked, leave = threading.Event(), threading.Event()

    def hold() -> None:
        with psycopg.connect(db_url) as locker, psycopg.connect(db_url, autocommit=True) as observer:
            locker.execute("LOCK TABLE concepts IN ACCESS EXCLUSIVE MODE")
            locked.set()
            queued: set[Any] = set()
            give_up = time.monotonic() + 10
            while not leave.is_set() and time.monotonic() < give_up:
                rows = observer.execute(
                    "SELECT query_start FROM pg_stat_activity"
                    " WHERE datname = current_database() AND wait_event_type = 'Lock'"
                ).fetchall()
                queued |= {row[0] for row in rows}
                if release_at_waiters is not None and len(queued) >= release_at_waiters:
                    break
                time.sleep(0.005)
            locker.rollback()

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    try:
        assert locked.wait(10), "could not lock concepts"
        yield
    finally:
        leave.set()
        holder.join(15)


async def store_one(client: Client, headers: dict[str, str]) -> int:
    body = {"content": "We deploy with Terraform, never by hand.", "namespace": "ops"}
    response = await client.post("/v1/memories", json=body, headers=headers)
    assert response.status_code == 201, response.text
    memory_id: int = response.json()["id"]
    return memory_id


@pytest.mark.parametrize(
    "hung_app_client", [{"recall": RecallSettings(statement_timeout_ms=300)}], indirect=True
)
async def test_recall_past_its_statement_timeout_answers_from_the_lexical_leg_alone(
    hung_app_client: Client, alice: dict[str, str], db_url: str
) -> None:
    client = hung_app_client
    memory_id = await store_one(client, alice)
    body = {"query": "how do we deploy with terraform", "namespace": "ops"}
    # The first statement waits out its 300 ms statement_timeout behind the lock; the lock goes once
    # a second statement (the lexical retry) queues behind it. Without a retry the answer is a 503.
    with concepts_locked(db_url, release_at_waiters=2):
        response = await client.post("/v1/recall", json=body, headers=alice)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["degraded"] is True
    assert answer["legs"] == {
        "lexical": "ok",
        "dense": "unavailable: statement timeout",
        "graph": "unavailable: statement timeout",
    }
    assert [hit["id"] for hit in answer["results"]] == [memory_id]


@pytest.mark.parametrize(
    "hung_app_client", [{"recall": RecallSettings(statement_timeout_ms=300)}], indirect=True
)
async def test_recall_of_the_lexical_leg_alone_past_its_statement_timeout_answers_503(
    hung_app_client: Client, alice: dict[str, str], db_url: str
) -> None:
    client = hung_app_client
    await store_one(client, alice)
    body = {"query": "terraform", "namespace": "ops", "weights": {"dense": 0, "graph": 0}}
    with concepts_locked(db_url):
        response, took = await timed(client, "POST", "/v1/recall", json=body, headers=alice)
    assert response.status_code == 503, response.text
    assert response.headers["retry-after"] == "1"
    assert "statement timeout" in response.json()["detail"]
    assert took < 0.3 + SLACK_S


def test_the_routes_that_embed_what_they_write_run_under_the_write_deadline(app: Litestar) -> None:
    """A batch store is up to 100 model calls: the 5 s request deadline would answer 503 for it on a
    busy machine, so store and PATCH run under MEMORIA_SERVER__WRITE_DEADLINE_MS; recall does not."""
    from litestar.routes import HTTPRoute

    from app.core.deadline import DEADLINE_KIND, WRITE

    kinds = {
        (method, route.path): handler.opt.get(DEADLINE_KIND)
        for route in app.routes
        if isinstance(route, HTTPRoute)
        for handler in route.route_handlers
        for method in handler.http_methods
    }
    assert kinds[("POST", "/v1/memories")] == WRITE
    assert kinds[("PATCH", "/v1/memories/{memory_id:int}")] == WRITE
    assert kinds[("POST", "/v1/recall")] is None
    assert kinds[("GET", "/v1/memories")] is None


async def test_a_transaction_whose_backend_is_terminated_mid_block_is_the_databases_failure(
    conn: asyncpg.Connection, db_url: str
) -> None:
    """asyncpg's `Transaction.__aexit__` then raises an InterfaceError ("the underlying connection is
    closed") in place of the connection's own error: it is still the database that went away."""
    victim = await asyncpg.connect(db_url)
    pid = await victim.fetchval("SELECT pg_backend_pid()")

    async def terminated_mid_block() -> None:
        async with victim.transaction():
            await conn.execute("SELECT pg_terminate_backend($1)", pid)
            await victim.execute("SELECT 1")

    try:
        with pytest.raises(asyncpg.InterfaceError) as broken:
            await terminated_mid_block()
    finally:
        await victim.close()
    assert database_unavailable(broken.value) is not None
    assert database_unavailable(asyncpg.InterfaceError("cannot call Connection.fetch(): bad")) is None
