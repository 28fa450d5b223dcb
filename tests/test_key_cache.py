"""A replica trusts a key PostgreSQL verified for `key_cache_ttl_s` (app.auth.key_cache): no round
trip per request, yet revocation and expiry within that bound, the key's rate limit in the one
bucket every replica shares, and an address with failed authentications still refused."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.auth import revoke_key
from app.auth.scopes import READ
from app.auth.settings import AuthSettings
from app.embeddings.local import LocalEmbedder
from app.factory import create_app
from app.settings import Settings
from tests.scoped_keys import bearer, scoped_key

Client = AsyncTestClient[Litestar]
SLOW = 0.001  # tokens per second: nothing refills while a test runs
TTL_S = 0.5


@pytest.fixture
def auth() -> AuthSettings:
    return AuthSettings(
        key_cache_ttl_s=TTL_S, key_requests_per_s=SLOW, key_burst=100, failed_auth_per_minute=SLOW * 60
    )


@pytest.fixture
async def trusting(settings: Settings, auth: AuthSettings, embedder: LocalEmbedder) -> AsyncIterator[Client]:
    app = create_app(settings.model_copy(update={"auth": auth}), embedder=embedder)
    async with AsyncTestClient(app=app) as test_client:
        yield test_client


async def _tokens(conn: asyncpg.Connection, key_id: int) -> float:
    return float(await conn.fetchval("SELECT tokens FROM rate_limits WHERE bucket = $1", f"key:{key_id}"))


async def test_a_trusted_key_takes_its_requests_from_its_bucket_ten_at_a_time(
    trusting: Client, conn: asyncpg.Connection
) -> None:
    created = await scoped_key(conn, "alice", [READ])
    assert (await trusting.get("/v1/namespaces", headers=bearer(created))).status_code == 200
    assert await _tokens(conn, created.id) == pytest.approx(99, abs=0.01)  # looked up: one token
    seen = []
    for _ in range(11):
        assert (await trusting.get("/v1/namespaces", headers=bearer(created))).status_code == 200
        seen.append(round(await _tokens(conn, created.id)))
    # a lease of ten, spent without a round trip, then the next one
    assert seen == [89] * 10 + [79]


async def test_a_trusted_key_past_its_limit_is_refused_all_the_same(
    settings: Settings, embedder: LocalEmbedder, conn: asyncpg.Connection
) -> None:
    auth = AuthSettings(key_cache_ttl_s=60, key_requests_per_s=SLOW, key_burst=15)
    async with AsyncTestClient(
        app=create_app(settings.model_copy(update={"auth": auth}), embedder=embedder)
    ) as c:
        created = await scoped_key(conn, "alice", [READ])
        statuses = [(await c.get("/v1/namespaces", headers=bearer(created))).status_code for _ in range(17)]
    # one looked up, a lease of ten, then the four left one by one (too few for a lease), then none
    assert statuses == [200] * 15 + [429, 429]


async def test_a_revoked_key_works_no_longer_than_the_trust_bound(
    trusting: Client, conn: asyncpg.Connection
) -> None:
    created = await scoped_key(conn, "alice", [READ])
    assert (await trusting.get("/v1/namespaces", headers=bearer(created))).status_code == 200
    assert await revoke_key(conn, str(created.id))
    # revoked by another process (`memoria keys revoke`): this replica still trusts the key a moment
    assert (await trusting.get("/v1/namespaces", headers=bearer(created))).status_code == 200
    await asyncio.sleep(TTL_S + 0.1)
    assert (await trusting.get("/v1/namespaces", headers=bearer(created))).status_code == 401


async def test_a_key_is_trusted_no_longer_than_it_lives(
    settings: Settings, embedder: LocalEmbedder, conn: asyncpg.Connection
) -> None:
    auth = AuthSettings(key_cache_ttl_s=300)
    async with AsyncTestClient(
        app=create_app(settings.model_copy(update={"auth": auth}), embedder=embedder)
    ) as c:
        created = await scoped_key(conn, "alice", [READ], expires_at=datetime.now(UTC) + timedelta(seconds=1))
        assert (await c.get("/v1/namespaces", headers=bearer(created))).status_code == 200
        await asyncio.sleep(1.1)
        assert (await c.get("/v1/namespaces", headers=bearer(created))).status_code == 401


async def test_an_address_locked_out_is_refused_even_with_a_key_it_used_a_moment_ago(
    trusting: Client, conn: asyncpg.Connection
) -> None:
    created = await scoped_key(conn, "alice", [READ])
    assert (await trusting.get("/v1/namespaces", headers=bearer(created))).status_code == 200
    statuses = [
        (await trusting.get("/v1/namespaces", headers=bearer("mem_guess"))).status_code for _ in range(11)
    ]
    assert statuses == [401] * 10 + [429]
    refused = await trusting.get("/v1/namespaces", headers=bearer(created))
    assert refused.status_code == 429  # a 200 would tell a right guess from a wrong one
    assert "failed authentications" in refused.json()["detail"]


async def test_with_the_cache_off_every_request_asks_the_database(
    uncached_client: Client, conn: asyncpg.Connection
) -> None:
    created = await scoped_key(conn, "alice", [READ])
    for _ in range(3):
        assert (await uncached_client.get("/v1/namespaces", headers=bearer(created))).status_code == 200
    assert await revoke_key(conn, str(created.id))
    assert (await uncached_client.get("/v1/namespaces", headers=bearer(created))).status_code == 401


async def test_requests_arriving_together_share_one_lease_instead_of_each_taking_one(
    trusting: Client, conn: asyncpg.Connection
) -> None:
    created = await scoped_key(conn, "alice", [READ])
    assert (await trusting.get("/v1/namespaces", headers=bearer(created))).status_code == 200
    answers = await asyncio.gather(
        *(trusting.get("/v1/namespaces", headers=bearer(created)) for _ in range(40))
    )
    assert [a.status_code for a in answers] == [200] * 40
    # forty requests: four leases of ten (one each, had every request asked for its own: 400 > 99)
    assert await _tokens(conn, created.id) == pytest.approx(99 - 40, abs=0.01)
