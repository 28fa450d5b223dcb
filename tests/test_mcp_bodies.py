"""What `/mcp` refuses before running anything, and how: as JSON-RPC errors the official client reports
for the call (a body over the size limit; a key twice in one object), and a namespace argument
checked as the REST API checks it (`""` is refused, never the `default` namespace).

The server is the app under uvicorn in this process, on real HTTP, so the official client's own
transport reads the answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import httpx
import pytest
import uvicorn
from mcp.shared.exceptions import MCPError

from app.embeddings import LocalEmbedder
from app.factory import create_app
from app.mcp.calls import Caller
from app.settings import Settings
from memoria_bench.mcp import mcp_session
from tests.test_mcp_tools import _call, alice_agent

PORT = 18753
BASE = f"http://127.0.0.1:{PORT}"
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@pytest.fixture
async def served(settings: Settings, embedder: LocalEmbedder) -> AsyncIterator[str]:
    config = uvicorn.Config(
        create_app(settings, embedder=embedder), host="127.0.0.1", port=PORT, log_config=None
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    try:
        while not server.started:
            assert not serving.done(), serving
            await asyncio.sleep(0.05)
        yield BASE
    finally:
        server.should_exit = True
        await serving


def _key(headers: dict[str, str]) -> str:
    return headers["Authorization"].removeprefix("Bearer ")


async def test_a_body_over_the_limit_is_a_jsonrpc_error_the_client_reports_for_the_call(
    served: str, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    huge = {"memories": [{"content": "x" * 1_100_000}]}
    async with mcp_session(served, _key(alice)) as client:
        with pytest.raises(MCPError, match="request body too large: at most 1048576 bytes"):
            await client.call_tool("memory_store", huge)
        after = await client.call_tool("memory_list", {})  # the session goes on
        assert not after.is_error
    async with httpx.AsyncClient(base_url=served) as http:
        body = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "memory_store", "arguments": huge},
        }
        answer = await http.post("/mcp", json=body, headers=alice | MCP_HEADERS)
    assert answer.status_code == 413
    assert answer.headers["content-type"] == "application/json"
    assert answer.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "request body too large: at most 1048576 bytes"},
    }
    assert await conn.fetchval("SELECT count(*) FROM memories") == 0


async def test_a_key_twice_in_one_object_is_refused_and_runs_nothing(
    served: str, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    # the SDK's decoder kept the last `name`: this ran a store where a list was shown first
    raw = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_list",'
        b' "name": "memory_store", "arguments": {"memories": [{"content": "stored by the second name"}]}}}'
    )
    async with httpx.AsyncClient(base_url=served) as http:
        answer = await http.post("/mcp", content=raw, headers=alice | MCP_HEADERS)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == {"code": -32600, "message": "the key 'name' appears twice in one object"}
    assert await conn.fetchval("SELECT count(*) FROM memories") == 0


@pytest.fixture
async def agent(client: Any, alice: dict[str, str], conn: asyncpg.Connection) -> Caller:
    return await alice_agent(client, conn)


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("memory_store", {"memories": [{"content": "Deploys run from main"}], "namespace": ""}),
        ("memory_recall", {"query": "deploy", "namespace": ""}),
        ("memory_list", {"namespace": ""}),
    ],
)
async def test_an_empty_namespace_argument_is_a_tool_error_as_rest_answers_422(
    client: Any,
    agent: Caller,
    alice: dict[str, str],
    conn: asyncpg.Connection,
    tool: str,
    arguments: dict[str, Any],
) -> None:
    outcome = await _call(client, agent, tool, arguments)
    assert outcome.is_error, outcome.text
    assert "invalid namespace ''" in outcome.text
    rest = await client.post(
        "/v1/memories", json={"content": "Deploys run from main", "namespace": ""}, headers=alice
    )
    assert rest.status_code == 422
    assert await conn.fetchval("SELECT count(*) FROM memories") == 0
