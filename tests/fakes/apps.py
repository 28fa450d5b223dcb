"""The real app on a given database and embedder, with a user's API key."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.auth.service import create_key, get_or_create_user
from app.embeddings import Embedder
from app.factory import create_app
from app.settings import DatabaseSettings, EmbeddingSettings, Settings

Client = AsyncTestClient[Litestar]


async def headers_for(url: str, user: str) -> dict[str, str]:
    conn = await asyncpg.connect(url)
    try:
        await get_or_create_user(conn, user)
        created = await create_key(conn, user)
    finally:
        await conn.close()
    return {"Authorization": f"Bearer {created.key}"}


@asynccontextmanager
async def serving(
    url: str, embedder: Embedder, embeddings: EmbeddingSettings
) -> AsyncIterator[tuple[Client, dict[str, str]]]:
    """A test client for `create_app(settings, embedder=embedder)` and alice's auth headers."""
    settings = Settings(database=DatabaseSettings(url=url), embeddings=embeddings)
    headers = await headers_for(url, "alice")
    async with AsyncTestClient(app=create_app(settings, embedder=embedder)) as client:
        yield client, headers
