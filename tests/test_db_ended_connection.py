"""A pooled connection that PostgreSQL ended while the pool held it idle answers 503, never 500.

When PostgreSQL ends a session (`pg_terminate_backend`, a crash restart, a failover, a kill of the
server) it first sends the client a FATAL error, then closes the socket. asyncpg, idle, cannot place
the error message and marks the connection as mid-operation; only the socket's end, which may come a
moment later (a proxy or a busy network between the two, the event loop), tells the pool that the
connection is gone. A request that acquires the connection in between fails on its first statement
with asyncpg's InternalClientError ("cannot switch to state 15; another operation (2) is in
progress" on BEGIN, state 11 on a statement it prepares): that was a 500 while PostgreSQL was killed
under load.

The real server's own FATAL message goes through a TCP proxy that forwards every byte and holds the
socket's end back for a moment, so that the request lands in between every time.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from urllib.parse import parse_qs, urlsplit

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.embeddings import LocalEmbedder
from app.factory import create_app
from app.settings import JobSettings, Settings

Client = AsyncTestClient[Litestar]
PROXY_PORT = 18751
HOLD_S = 2.0
"""How long the proxy keeps the client's socket open after PostgreSQL closed its end."""


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, hold_s: float) -> None:
    """Bytes from `reader` to `writer`; at the end of `reader`, `writer` is closed `hold_s` later."""
    with contextlib.suppress(ConnectionError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    await asyncio.sleep(hold_s)
    writer.close()


async def _serve(
    upstream: Callable[[], Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]], stop: asyncio.Event
) -> None:
    pumps: set[asyncio.Task[None]] = set()

    async def relay(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        server_reader, server_writer = await upstream()
        pumps.add(asyncio.create_task(_pump(client_reader, server_writer, 0.0)))
        pumps.add(asyncio.create_task(_pump(server_reader, client_writer, HOLD_S)))

    server = await asyncio.start_server(relay, "127.0.0.1", PROXY_PORT)
    try:
        await stop.wait()
    finally:
        server.close()
        for task in pumps:
            task.cancel()
        await asyncio.gather(*pumps, return_exceptions=True)


@contextlib.contextmanager
def slow_to_close_proxy(db_url: str) -> Iterator[str]:
    """A TCP proxy in front of `db_url`'s server, on its own thread and event loop (the app under test
    runs on another, the test client's); the URL of the same database through it."""
    parts = urlsplit(db_url)
    socket_dir = parse_qs(parts.query).get("host", [""])[0]

    async def upstream() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if socket_dir.startswith("/"):
            return await asyncio.open_unix_connection(f"{socket_dir}/.s.PGSQL.{parts.port or 5432}")
        return await asyncio.open_connection(parts.hostname, parts.port or 5432)

    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    serving = loop.create_task(_serve(upstream, stop))
    thread = threading.Thread(target=loop.run_until_complete, args=(serving,), daemon=True)
    thread.start()
    user = f"{parts.username}:{parts.password or ''}@" if parts.username else ""
    try:
        yield f"postgresql://{user}127.0.0.1:{PROXY_PORT}{parts.path}"
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(10)
        loop.close()


@pytest.fixture
async def proxied_client(db_url: str, settings: Settings, embedder: LocalEmbedder) -> AsyncIterator[Client]:
    """The app on one pooled connection through the proxy (no jobs or warm-up sharing it)."""
    with slow_to_close_proxy(db_url) as url:
        database = settings.database.model_copy(
            update={"url": url, "pool_min_size": 1, "pool_max_size": 1, "warmup_timeout_s": 0}
        )
        tuned = settings.model_copy(update={"database": database, "jobs": JobSettings(workers=0)})
        app = create_app(tuned, embedder=embedder)
        async with AsyncTestClient(app=app) as client:
            yield client


async def test_a_store_on_a_connection_postgres_just_ended_answers_503_and_serving_resumes(
    proxied_client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    client = proxied_client
    first = await client.post("/v1/memories", json={"content": "Deploys run from main"}, headers=alice)
    assert first.status_code == 201, first.text

    ended = await conn.fetchval(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
        " WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
    )
    assert ended == 1  # the app's one pooled connection
    await asyncio.sleep(0.3)  # its FATAL message has reached the app; the socket's end has not
    answer = await client.post("/v1/memories", json={"content": "Rollbacks use the last tag"}, headers=alice)
    assert answer.status_code == 503, answer.text
    assert answer.headers["retry-after"] == "1"
    assert answer.headers["content-type"].startswith("application/problem+json")

    await asyncio.sleep(HOLD_S)  # the socket's end arrives: the pool opens a new connection
    again = await client.post("/v1/memories", json={"content": "Rollbacks use the last tag"}, headers=alice)
    assert again.status_code == 201, again.text
