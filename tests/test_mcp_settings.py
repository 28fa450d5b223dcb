"""`MEMORIA_MCP__ENABLED=false` takes the route away; by default it is there, behind a key."""

from __future__ import annotations

from litestar.testing import AsyncTestClient

from app.embeddings import LocalEmbedder
from app.factory import create_app
from app.mcp.settings import McpSettings
from app.settings import Settings

BODY = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


async def test_the_mcp_route_needs_a_key_by_default(settings: Settings, embedder: LocalEmbedder) -> None:
    async with AsyncTestClient(app=create_app(settings, embedder=embedder)) as client:
        answer = await client.post("/mcp", json=BODY)
    assert answer.status_code == 401


async def test_disabled_mcp_has_no_route(settings: Settings, embedder: LocalEmbedder) -> None:
    disabled = settings.model_copy(update={"mcp": McpSettings(enabled=False)})
    async with AsyncTestClient(app=create_app(disabled, embedder=embedder)) as client:
        answer = await client.post("/mcp", json=BODY)
    assert answer.status_code == 404
