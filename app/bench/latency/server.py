"""A `memoria serve` process on the scratch database, for the HTTP figures."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from app.bench.serve import served_api as serve


@asynccontextmanager
async def served_api(url: str) -> AsyncIterator[str]:
    """A `memoria serve` process against `url` (already migrated); yields its base URL."""
    env = {"MEMORIA_DATABASE__URL": url, "MEMORIA_SERVER__SERVER_TIMING": "true"}  # the request split
    async with serve(env, "--no-migrate", unset=["MEMORIA_DATABASE__READ_URL"]) as api:
        yield api.base
