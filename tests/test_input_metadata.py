"""Metadata is bounded like content is: at most MAX_METADATA_BYTES of JSON, nested at most
MAX_METADATA_DEPTH levels, on store and on PATCH; a refused write changes nothing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.embeddings import LocalEmbedder
from app.factory import create_app
from app.memories.settings import MemorySettings
from app.settings import Settings

Client = AsyncTestClient[Litestar]
LIMIT = 16 * 1024
DEPTH = 16


def _of_size(size: int) -> dict[str, Any]:
    """Metadata whose compact JSON encoding is exactly `size` bytes."""
    padding = size - len(msgspec.json.encode({"k": ""}))
    metadata = {"k": "x" * padding}
    assert len(msgspec.json.encode(metadata)) == size
    return metadata


def _of_depth(depth: int) -> dict[str, Any]:
    """Metadata nesting `depth` levels, the metadata object itself being the first."""
    metadata: dict[str, Any] = {}
    for _ in range(depth - 1):
        metadata = {"k": metadata}
    return metadata


async def _stored(conn: asyncpg.Connection) -> int:
    return int(await conn.fetchval("SELECT count(*) FROM memories"))


def test_the_limits_are_settings_with_defaults_of_16_kib_and_16_levels(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert (MemorySettings().max_metadata_bytes, MemorySettings().max_metadata_depth) == (LIMIT, DEPTH)
    monkeypatch.setenv("MEMORIA_MEMORIES__MAX_METADATA_BYTES", "100")
    monkeypatch.setenv("MEMORIA_MEMORIES__MAX_METADATA_DEPTH", "3")
    memories = Settings().memories
    assert (memories.max_metadata_bytes, memories.max_metadata_depth) == (100, 3)


@pytest.mark.parametrize(
    ("metadata", "needle"),
    [
        pytest.param(
            _of_size(LIMIT + 1), f"metadata is {LIMIT + 1} bytes as JSON; the limit is {LIMIT}", id="size"
        ),
        pytest.param(
            _of_size(1_000_000), "metadata is 1000000 bytes as JSON; the limit is 16384", id="a-megabyte"
        ),
        pytest.param(_of_depth(DEPTH + 1), f"metadata nests deeper than {DEPTH} levels", id="depth"),
    ],
)
async def test_metadata_over_a_limit_is_refused_on_store_and_patch(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection, metadata: dict[str, Any], needle: str
) -> None:
    refused = await client.post("/v1/memories", json={"content": "a", "metadata": metadata}, headers=alice)
    assert refused.status_code == 422, refused.text
    assert needle in refused.json()["detail"]
    batch = [{"content": "b"}, {"content": "c", "metadata": metadata}]
    refused = await client.post("/v1/memories", json=batch, headers=alice)
    assert refused.status_code == 422 and f"[1].{needle}" in refused.json()["detail"], refused.text
    assert await _stored(conn) == 0

    memory = (await client.post("/v1/memories", json={"content": "kept"}, headers=alice)).json()
    url = f"/v1/memories/{memory['id']}"
    refused = await client.patch(url, json={"metadata": metadata}, headers=alice)
    assert refused.status_code == 422 and needle in refused.json()["detail"], refused.text
    assert (await client.get(url, headers=alice)).json()["metadata"] == {}


async def test_metadata_at_the_limits_is_stored_whole(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    for metadata in (_of_size(LIMIT), _of_depth(DEPTH)):
        stored = await client.post(
            "/v1/memories", json={"content": json.dumps(metadata)[:50], "metadata": metadata}, headers=alice
        )
        assert stored.status_code == 201, stored.text
        url = f"/v1/memories/{stored.json()['id']}"
        assert (await client.get(url, headers=alice)).json()["metadata"] == metadata
        patched = await client.patch(url, json={"metadata": metadata}, headers=alice)
        assert patched.status_code == 200, patched.text
    assert await _stored(conn) == 2


@pytest.fixture
async def small_limits_client(
    settings: Settings, embedder: LocalEmbedder
) -> AsyncIterator[AsyncTestClient[Litestar]]:
    limits = MemorySettings(max_metadata_bytes=64, max_metadata_depth=2)
    app = create_app(settings.model_copy(update={"memories": limits}), embedder=embedder)
    async with AsyncTestClient(app=app) as test_client:
        yield test_client


async def test_the_configured_limits_are_the_ones_applied(
    small_limits_client: Client, alice: dict[str, str]
) -> None:
    post = small_limits_client.post
    assert (
        await post("/v1/memories", json={"content": "a", "metadata": _of_size(64)}, headers=alice)
    ).is_success
    too_big = await post("/v1/memories", json={"content": "b", "metadata": _of_size(65)}, headers=alice)
    assert too_big.status_code == 422 and "the limit is 64" in too_big.json()["detail"]
    too_deep = await post("/v1/memories", json={"content": "c", "metadata": _of_depth(3)}, headers=alice)
    assert too_deep.status_code == 422 and "deeper than 2 levels" in too_deep.json()["detail"]
