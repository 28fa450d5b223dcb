"""`memoria bench hook --agent X` times each agent's own prompt hook against a real `memoria serve`:
its route, its event name and the client's `--agent` (the rows' shape and outcomes, no figures)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import httpx
import pytest

from app.auth.service import create_key, get_or_create_user
from app.hooks.hosts import HOSTS
from memoria_bench.hook_latency import bench_hook_latency
from memoria_bench.serve import served_api
from tests.conftest import template_copy

pytestmark = pytest.mark.e2e

NAMESPACE = "bench-hook-agents"


@pytest.fixture
def bench_db(pg_admin_url: str, template_url: str) -> Iterator[str]:
    with template_copy(pg_admin_url, "t_bench_hook_agents") as url:
        yield url


async def _key(url: str) -> str:
    conn = await asyncpg.connect(url)
    try:
        await get_or_create_user(conn, "bench-hook")
        return (await create_key(conn, "bench-hook")).key
    finally:
        await conn.close()


async def test_every_agents_prompt_hook_is_timed_through_its_own_route_and_payload(
    bench_db: str, tmp_path: Path
) -> None:
    key = await _key(bench_db)
    env = {"MEMORIA_DATABASE__URL": bench_db}
    async with served_api(env, "--no-migrate", unset=["MEMORIA_DATABASE__READ_URL"]) as api:
        async with httpx.AsyncClient(base_url=api.base, headers={"Authorization": f"Bearer {key}"}) as http:
            stored = await http.post(
                "/v1/memories",
                json={"content": "How do we deploy the service: run make deploy.", "namespace": NAMESPACE},
            )
            assert stored.status_code == 201, stored.text
        for host in HOSTS.values():
            rows = await asyncio.to_thread(
                bench_hook_latency, api.base, key, str(tmp_path), NAMESPACE, 2, 0, host
            )
            notes = {row["measure"]: row["note"] for row in rows}
            assert [row["runs"] for row in rows] == [2, 2, 2], (host.name, rows)
            # answered by the host's route: the server recalled (or had nothing), never refused
            assert notes["http endpoint"].split()[0] in {"injected", "no-results", "below-floor"}, notes
            assert notes["command hook, server up"].split()[0] in {"injected", "empty"}, notes
            assert notes["command hook, server down"] == "empty 2", notes
