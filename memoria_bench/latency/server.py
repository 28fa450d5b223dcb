"""A `memoria serve` process on the scratch database, for the HTTP figures."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

from memoria_bench.serve import served_api as serve


@asynccontextmanager
async def served_api(url: str, extra_env: Mapping[str, str] | None = None) -> AsyncIterator[str]:
    """A `memoria serve` process against `url` (already migrated), with `extra_env` over its
    environment; yields its base URL."""
    env = {"MEMORIA_DATABASE__URL": url, "MEMORIA_SERVER__SERVER_TIMING": "true", **(extra_env or {})}
    async with serve(env, "--no-migrate", unset=["MEMORIA_DATABASE__READ_URL"]) as api:
        yield api.base
