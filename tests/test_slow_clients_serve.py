"""End to end: the connection limits and the `GET /mcp` stream bounds of a real `memoria serve`
(one process for the module, short limits), over real sockets on 127.0.0.1."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Iterator

import asyncpg
import httpx
import pytest

from app.auth.service import create_key, get_or_create_user
from memoria_bench.serve import ServedApi, served_api
from tests.conftest import template_copy

pytestmark = pytest.mark.e2e

CAP = 32
METRICS_TOKEN = "scrape-token-for-the-test"
LIFETIME_S = 2
BOUND_S = 20.0  # "at all, within": far above the limits set here
ENV = {
    "MEMORIA_SERVER__HEADER_TIMEOUT_S": "1",
    "MEMORIA_SERVER__MAX_CONNECTIONS_PER_ADDRESS": str(CAP),
    "MEMORIA_MCP__STREAMS_PER_KEY": "2",
    "MEMORIA_MCP__STREAM_MAX_LIFETIME_S": str(LIFETIME_S),
    "MEMORIA_METRICS__TOKEN": METRICS_TOKEN,
}


@pytest.fixture(scope="module")
def module_db(pg_admin_url: str, template_url: str) -> Iterator[str]:
    with template_copy(pg_admin_url, "t_slow") as url:
        yield url


@pytest.fixture(scope="module")
async def served(module_db: str) -> AsyncIterator[ServedApi]:
    env = {"MEMORIA_DATABASE__URL": module_db, **ENV}
    async with served_api(env, "--no-migrate", unset=["MEMORIA_DATABASE__READ_URL"]) as api:
        yield api


async def new_key(db_url: str) -> str:
    conn = await asyncpg.connect(db_url)
    try:
        user = f"u{uuid.uuid4().hex[:8]}"
        await get_or_create_user(conn, user)
        return (await create_key(conn, user, scopes=("read", "write"))).key
    finally:
        await conn.close()


async def read_until_closed(reader: asyncio.StreamReader) -> bytes:
    received = b""
    while chunk := await reader.read(4096):
        received += chunk
    return received


async def metric(served: ServedApi, line_start: str) -> float:
    async with httpx.AsyncClient(timeout=BOUND_S) as client:
        text = (
            await client.get(f"{served.base}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
        ).text
    values = [float(line.split()[-1]) for line in text.splitlines() if line.startswith(line_start)]
    assert len(values) == 1, text
    return values[0]


async def test_serve_refuses_past_the_address_cap_and_closes_idle_sockets_after_the_header_timeout(
    served: ServedApi,
) -> None:
    port = int(served.base.rsplit(":", 1)[1])
    held = [await asyncio.open_connection("127.0.0.1", port) for _ in range(CAP)]
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        refused = await asyncio.wait_for(read_until_closed(reader), BOUND_S)
        writer.close()
        assert refused.startswith(b"HTTP/1.1 503 "), refused
        # the held ones never sent a byte: each is closed after the header timeout, unanswered
        closed = await asyncio.wait_for(
            asyncio.gather(*(read_until_closed(reader) for reader, _ in held)), BOUND_S
        )
        assert closed == [b""] * CAP
    finally:
        for _, writer in held:
            writer.close()
    async with httpx.AsyncClient(timeout=BOUND_S) as client:
        assert (await client.get(f"{served.base}/healthz")).status_code == 200
    assert await metric(served, 'memoria_connections_refused_total{reason="address_cap"}') >= 1
    assert await metric(served, 'memoria_connections_timed_out_total{reason="header_timeout"}') >= CAP
    assert any("MEMORIA_SERVER__MAX_CONNECTIONS_PER_ADDRESS" in line for line in served.tail), served.tail


async def test_a_key_holds_at_most_two_event_streams_and_each_ends_after_its_lifetime(
    served: ServedApi, module_db: str
) -> None:
    key, other_key = await new_key(module_db), await new_key(module_db)

    def headers(bearer: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {bearer}", "Accept": "text/event-stream"}

    async with httpx.AsyncClient(base_url=served.base, timeout=BOUND_S) as client:

        async def stream_seconds(bearer: str, opened: asyncio.Event) -> float:
            """How long a stream stayed open (its answer must be an event stream)."""
            async with client.stream("GET", "/mcp", headers=headers(bearer)) as answer:
                assert answer.status_code == 200, await answer.aread()
                assert answer.headers["content-type"].startswith("text/event-stream")
                started = time.monotonic()
                opened.set()
                async for _ in answer.aiter_bytes():
                    pass
                return time.monotonic() - started

        events = [asyncio.Event() for _ in range(2)]
        streams = [asyncio.create_task(stream_seconds(key, event)) for event in events]
        await asyncio.wait_for(asyncio.gather(*(event.wait() for event in events)), BOUND_S)

        third = await asyncio.wait_for(client.get("/mcp", headers=headers(key)), BOUND_S)
        assert third.status_code == 429, third.text
        assert int(third.headers["retry-after"]) >= 1
        assert "event streams" in third.json()["detail"]

        other = asyncio.Event()  # another key has its own count
        other_stream = asyncio.create_task(stream_seconds(other_key, other))
        await asyncio.wait_for(other.wait(), BOUND_S)

        lasted = await asyncio.wait_for(asyncio.gather(*streams, other_stream), BOUND_S)
        assert all(seconds < BOUND_S for seconds in lasted), lasted

        again = asyncio.Event()  # the ended ones no longer count
        await asyncio.wait_for(stream_seconds(key, again), BOUND_S)
        assert again.is_set()
