"""Rate limits: a token bucket per API key, and a stricter one per client address for failed
authentications, kept in PostgreSQL (`rate_limits`) so replicas share them.

Time is never waited for: a bucket is refilled by moving its `updated_at` back, as the passing of
that much time would.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import pytest
from litestar import Litestar
from litestar.exceptions import NotAuthorizedException
from litestar.testing import AsyncTestClient

from app.auth.gate import AddressLockedOut, Gate, KeyRateLimited, address_bucket
from app.auth.scopes import READ
from app.auth.settings import AuthSettings
from app.core.metrics import Metrics
from app.embeddings import LocalEmbedder
from app.factory import create_app
from app.hooks.routes import OUTCOME_HEADER
from app.settings import Settings
from tests.scoped_keys import bearer, scoped_key

Client = AsyncTestClient[Litestar]
HOOK = "/v1/hooks/claude-code/user-prompt-submit"
SLOW = 0.001  # tokens per second: nothing refills while a test runs
ADDRESS = "addr:testclient"  # the test client's address bucket


def _limits(**values: float | int | bool) -> AuthSettings:
    fields: dict[str, float | int | bool] = {"key_requests_per_s": SLOW, "failed_auth_per_minute": SLOW * 60}
    return AuthSettings.model_validate(fields | values)


@pytest.fixture
def limits() -> AuthSettings:
    return _limits(key_burst=3, failed_auth_burst=2)


@pytest.fixture
async def limited(settings: Settings, limits: AuthSettings, embedder: LocalEmbedder) -> AsyncIterator[Client]:
    app = create_app(settings.model_copy(update={"auth": limits}), embedder=embedder)
    async with AsyncTestClient(app=app) as test_client:
        yield test_client


async def _age(conn: asyncpg.Connection, bucket: str, seconds: float) -> None:
    """As if `seconds` had passed since the bucket was last touched."""
    await conn.execute(
        "UPDATE rate_limits SET updated_at = updated_at - make_interval(secs => $2) WHERE bucket = $1",
        bucket,
        seconds,
    )


def test_the_defaults_suit_a_real_user() -> None:
    defaults = AuthSettings()
    assert defaults.rate_limits
    assert (defaults.key_requests_per_s, defaults.key_burst) == (20.0, 200)
    assert (defaults.failed_auth_per_minute, defaults.failed_auth_burst) == (10.0, 10)


async def test_a_key_past_its_burst_gets_429_with_retry_after(
    limited: Client, conn: asyncpg.Connection
) -> None:
    headers = bearer(await scoped_key(conn, "alice", [READ]))
    for _ in range(3):
        assert (await limited.get("/v1/namespaces", headers=headers)).status_code == 200
    refused = await limited.get("/v1/namespaces", headers=headers)
    assert refused.status_code == 429
    assert refused.headers["content-type"].startswith("application/problem+json")
    assert refused.json()["status"] == 429 and "requests" in refused.json()["detail"]
    retry_after = refused.headers["retry-after"]
    assert retry_after.isdigit() and int(retry_after) >= 1
    assert int(retry_after) == 1000  # one token at 0.001 per second
    # another key of the same user has a bucket of its own
    other = bearer(await scoped_key(conn, "alice", [READ]))
    assert (await limited.get("/v1/namespaces", headers=other)).status_code == 200


async def test_a_refused_request_costs_nothing_and_the_bucket_refills(
    limited: Client, conn: asyncpg.Connection
) -> None:
    created = await scoped_key(conn, "alice", [READ])
    for _ in range(3):
        await limited.get("/v1/namespaces", headers=bearer(created))
    for _ in range(5):
        assert (await limited.get("/v1/namespaces", headers=bearer(created))).status_code == 429
    await _age(conn, f"key:{created.id}", 1 / SLOW)  # one token's worth of time
    assert (await limited.get("/v1/namespaces", headers=bearer(created))).status_code == 200
    assert (await limited.get("/v1/namespaces", headers=bearer(created))).status_code == 429
    await _age(conn, f"key:{created.id}", 100 / SLOW)  # far more than the burst: full, not more
    statuses = [(await limited.get("/v1/namespaces", headers=bearer(created))).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]


async def test_rate_limited_requests_are_counted(limited: Client, conn: asyncpg.Connection) -> None:
    headers = bearer(await scoped_key(conn, "alice", [READ]))
    for _ in range(5):
        await limited.get("/v1/namespaces", headers=headers)
    metrics: Metrics = limited.app.state.metrics
    value = metrics.registry.get_sample_value("memoria_rate_limited_requests_total", {"limit": "key"})
    assert value == 2


async def test_failed_authentications_lock_the_address_out_even_for_a_valid_key(
    limited: Client, conn: asyncpg.Connection
) -> None:
    created = await scoped_key(conn, "alice", [READ])
    for _ in range(2):
        assert (await limited.get("/v1/namespaces", headers=bearer("mem_guess"))).status_code == 401
    locked = await limited.get("/v1/namespaces", headers=bearer("mem_guess"))
    assert locked.status_code == 429 and int(locked.headers["retry-after"]) >= 1
    assert "failed authentications" in locked.json()["detail"]
    valid = await limited.get("/v1/namespaces", headers=bearer(created))
    assert valid.status_code == 429  # a 200 here would tell a right guess from a wrong one
    assert "failed authentications" in valid.json()["detail"]
    # the key was not even looked up: its use is not noted, its bucket not touched
    assert await conn.fetchval("SELECT last_used_at FROM api_keys WHERE id = $1", created.id) is None
    assert await conn.fetchval("SELECT count(*) FROM rate_limits WHERE bucket LIKE 'key:%'") == 0
    metrics: Metrics = limited.app.state.metrics
    assert metrics.registry.get_sample_value("memoria_rate_limited_requests_total", {"limit": "address"}) == 2

    await _age(conn, ADDRESS, 1 / SLOW)  # one failure's worth refilled: the valid key passes again
    assert (await limited.get("/v1/namespaces", headers=bearer(created))).status_code == 200
    assert (await limited.get("/v1/namespaces", headers=bearer("mem_guess"))).status_code == 401
    assert (await limited.get("/v1/namespaces", headers=bearer(created))).status_code == 429


async def test_successful_requests_do_not_count_as_failures(
    limited: Client, conn: asyncpg.Connection
) -> None:
    for user in ("alice", "bob", "carol", "dave"):
        headers = bearer(await scoped_key(conn, user, [READ]))
        assert (await limited.get("/v1/namespaces", headers=headers)).status_code == 200
    assert await conn.fetchval("SELECT count(*) FROM rate_limits WHERE bucket = $1", ADDRESS) == 0


async def test_the_hook_answers_empty_when_rate_limited(limited: Client, conn: asyncpg.Connection) -> None:
    headers = bearer(await scoped_key(conn, "alice", [READ]))
    event = {"hook_event_name": "UserPromptSubmit", "prompt": "how do we deploy to production?"}
    outcomes = []
    for _ in range(4):
        response = await limited.post(f"{HOOK}?namespace=ops", json=event, headers=headers)
        assert response.status_code == 200
        outcomes.append(response.headers[OUTCOME_HEADER])
    assert outcomes[:3] == ["no-namespace"] * 3 and outcomes[3] == "rate-limited"
    for _ in range(2):  # a wrong key is `{}` too (never a 401 a person would see), and counts as a failure
        guess = await limited.post(HOOK, json=event, headers=bearer("mem_guess"))
        assert guess.status_code == 200 and guess.json() == {}
        assert guess.headers[OUTCOME_HEADER] == "unauthorized"
    locked = await limited.post(HOOK, json=event, headers=bearer("mem_guess"))
    assert locked.status_code == 200 and locked.json() == {}
    assert locked.headers[OUTCOME_HEADER] == "rate-limited"


@pytest.mark.parametrize("limits", [_limits(rate_limits=False, key_burst=1, failed_auth_burst=1)])
async def test_limits_can_be_switched_off(limited: Client, conn: asyncpg.Connection) -> None:
    headers = bearer(await scoped_key(conn, "alice", [READ]))
    for _ in range(5):
        assert (await limited.get("/v1/namespaces", headers=bearer("mem_guess"))).status_code == 401
        assert (await limited.get("/v1/namespaces", headers=headers)).status_code == 200
    assert await conn.fetchval("SELECT count(*) FROM rate_limits") == 0


@pytest.mark.parametrize("limits", [_limits(key_requests_per_s=0, failed_auth_per_minute=0, key_burst=1)])
async def test_a_zero_rate_switches_that_limit_off(limited: Client, conn: asyncpg.Connection) -> None:
    headers = bearer(await scoped_key(conn, "alice", [READ]))
    for _ in range(3):
        assert (await limited.get("/v1/namespaces", headers=headers)).status_code == 200
        assert (await limited.get("/v1/namespaces", headers=bearer("mem_guess"))).status_code == 401
    assert await conn.fetchval("SELECT count(*) FROM rate_limits") == 0


@pytest.fixture
async def pool(db_url: str) -> AsyncIterator[asyncpg.Pool]:
    async with asyncpg.create_pool(db_url, min_size=8, max_size=8) as created:
        yield created


async def _outcomes(gate: Gate, pool: asyncpg.Pool, keys: list[str], client: str) -> list[str]:
    async def one(key: str) -> str:
        try:
            await gate.admit(pool, key, client)
        except KeyRateLimited:
            return "429 key"
        except AddressLockedOut:
            return "429 address"
        except NotAuthorizedException:
            return "401"
        return "200"

    return list(await asyncio.gather(*(one(key) for key in keys)))


async def test_concurrent_requests_of_one_key_pass_exactly_the_burst(
    pool: asyncpg.Pool, conn: asyncpg.Connection
) -> None:
    gate = Gate(_limits(key_burst=15))
    created = await scoped_key(conn, "alice", [READ])
    outcomes = await _outcomes(gate, pool, [created.key] * 60, "10.0.0.1")
    assert outcomes.count("200") == 15 and outcomes.count("429 key") == 45


async def test_concurrent_failures_of_one_address_answer_401_exactly_the_burst(
    pool: asyncpg.Pool, conn: asyncpg.Connection
) -> None:
    gate = Gate(_limits(failed_auth_burst=7))
    outcomes = await _outcomes(gate, pool, [f"mem_guess{i}" for i in range(40)], "10.0.0.2")
    assert outcomes.count("401") == 7 and outcomes.count("429 address") == 33
    # another address is not affected
    assert await _outcomes(gate, pool, ["mem_guess"], "10.0.0.3") == ["401"]


def test_ipv6_clients_count_by_their_64_and_mapped_ipv4_as_ipv4() -> None:
    assert address_bucket("2001:db8:1:2:aaaa::1") == address_bucket("2001:db8:1:2:bbbb::2")
    assert address_bucket("2001:db8:1:2::1") == "addr:2001:db8:1:2::/64"
    assert address_bucket("2001:db8:1:3::1") != address_bucket("2001:db8:1:2::1")
    assert address_bucket("::ffff:192.0.2.7") == address_bucket("192.0.2.7") == "addr:192.0.2.7"
    assert address_bucket(None) == "addr:unknown"


def test_behind_a_trusted_proxy_the_forwarded_client_counts() -> None:
    gate = Gate(AuthSettings(trusted_proxies=["10.0.0.0/8", "192.0.2.1"]))
    # the ingress (10.1.2.3) appended the client it saw; what is left of that, the client wrote itself
    assert gate.client("10.1.2.3", ["6.6.6.6, 203.0.113.9"]) == "203.0.113.9"
    assert gate.client("10.1.2.3", ["203.0.113.9, 192.0.2.1"]) == "203.0.113.9"  # two proxies
    assert gate.client("10.1.2.3", ["203.0.113.9", "10.9.9.9"]) == "203.0.113.9"  # repeated header
    assert gate.client("10.1.2.3", []) == "10.1.2.3"
    assert gate.client("10.1.2.3", ["garbage"]) == "10.1.2.3"
    # a client that is not a trusted proxy cannot pick the address it counts against
    assert gate.client("203.0.113.9", ["6.6.6.6"]) == "203.0.113.9"
    assert Gate(AuthSettings()).client("10.1.2.3", ["203.0.113.9"]) == "10.1.2.3"
    with pytest.raises(ValueError, match="not an IP address or network"):
        AuthSettings(trusted_proxies=["ingress.local"])


async def test_a_sweep_deletes_only_idle_buckets_and_at_most_a_batch(conn: asyncpg.Connection) -> None:
    settings = _limits(key_requests_per_s=10, key_burst=10, failed_auth_per_minute=60, failed_auth_burst=5)
    assert settings.idle_after_s == pytest.approx(6.0)  # the slower bucket refills in (5 + 1) / 1 s
    await conn.execute(
        """
        INSERT INTO rate_limits (bucket, tokens, updated_at)
        SELECT 'addr:idle' || i, 0, now() - interval '1 minute' FROM generate_series(1, 25) i
        UNION ALL
        SELECT 'addr:busy' || i, 0, now() - interval '2 seconds' FROM generate_series(1, 5) i
        """
    )
    gate = Gate(settings.model_copy(update={"sweep_batch": 20}))
    assert await gate.sweep_if_due(conn) == 20  # a full batch: the next sweep is due at once
    assert await gate.sweep_if_due(conn) == 5
    assert await gate.sweep_if_due(conn) == 0  # not due again before sweep_interval_s
    left = await conn.fetch("SELECT bucket FROM rate_limits ORDER BY bucket")
    assert [r["bucket"] for r in left] == [f"addr:busy{i}" for i in range(1, 6)]


async def test_requests_sweep_idle_buckets_as_they_go(limited: Client, conn: asyncpg.Connection) -> None:
    await conn.execute("INSERT INTO rate_limits VALUES ('addr:gone', 0, now() - interval '30 days')")
    headers = bearer(await scoped_key(conn, "alice", [READ]))
    assert (await limited.get("/v1/namespaces", headers=headers)).status_code == 200
    assert await conn.fetchval("SELECT count(*) FROM rate_limits WHERE bucket = 'addr:gone'") == 0
