"""`/readyz` tells everyone whether the service is ready, and only a key with the `admin` scope which
check failed and how. The key is looked up within the probe's bound; while the database cannot
answer, a key it confirmed as admin shortly before still gets the details, and a key it refused
does not."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.auth import revoke_key
from app.auth.settings import AuthSettings
from app.embeddings import LocalEmbedder
from app.factory import create_app
from app.settings import Settings
from tests.test_deadlines import backend_pid, stopped, tuned

Client = AsyncTestClient[Litestar]
DETAILS = {"database": "ok", "migrations": "ok", "embedder": "ok"}


async def make_admin(conn: asyncpg.Connection, user: str) -> None:
    await conn.execute(
        "UPDATE api_keys SET scopes = '{read,write,admin}' "
        "WHERE user_id = (SELECT id FROM users WHERE name = $1)",
        user,
    )


def key_of(headers: dict[str, str]) -> str:
    return headers["Authorization"].removeprefix("Bearer ")


@pytest.fixture
async def one_connection_client(settings: Settings, embedder: LocalEmbedder) -> AsyncIterator[Client]:
    """The app on a single pooled connection (`tuned`), so hanging its backend hangs every query."""
    async with AsyncTestClient(app=create_app(tuned(settings), embedder=embedder)) as client:
        yield client


async def test_without_a_key_only_the_status_is_told(client: Client) -> None:
    ready = await client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready"}


async def test_a_key_without_the_admin_scope_or_an_unknown_key_gets_only_the_status(
    client: Client, alice: dict[str, str]
) -> None:
    for headers in (alice, {"Authorization": "Bearer mem_not-a-real-key"}, {"Authorization": "Basic eA=="}):
        ready = await client.get("/readyz", headers=headers)
        assert ready.status_code == 200  # a probe is never refused: a bad key just gets the public answer
        assert ready.json() == {"status": "ready"}


async def test_an_admin_key_gets_every_check(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    await make_admin(conn, "alice")
    ready = await client.get("/readyz", headers=alice)
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready", "checks": DETAILS}


async def test_not_ready_is_503_with_retry_after_and_no_details_without_an_admin_key(
    one_connection_client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    client = one_connection_client
    await make_admin(conn, "alice")
    # one request per hang: the pool replaces a connection whose query was abandoned at the bound
    with stopped(await backend_pid(client)):
        public = await client.get("/readyz")
    with stopped(await backend_pid(client)):
        never_confirmed = await client.get("/readyz", headers=alice)  # the database cannot say: no details
    for answer in (public, never_confirmed):
        assert answer.status_code == 503
        assert answer.headers["retry-after"] == "1"
        assert answer.json() == {"status": "not ready"}


async def test_a_confirmed_admin_key_sees_why_while_the_database_is_hung(
    one_connection_client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    client = one_connection_client
    await make_admin(conn, "alice")
    assert (await client.get("/readyz", headers=alice)).json()["checks"] == DETAILS  # confirmed
    with stopped(await backend_pid(client)):
        hung = await client.get("/readyz", headers=alice)
    assert hung.status_code == 503
    assert hung.json()["checks"]["database"].startswith("hung")
    assert hung.json()["status"] == "not ready"


async def test_a_revoked_admin_key_loses_the_details_at_once_and_while_the_database_is_hung(
    one_connection_client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    client = one_connection_client
    await make_admin(conn, "alice")
    assert "checks" in (await client.get("/readyz", headers=alice)).json()
    assert await revoke_key(conn, key_of(alice))
    assert (await client.get("/readyz", headers=alice)).json() == {"status": "ready"}
    with stopped(await backend_pid(client)):
        hung = await client.get("/readyz", headers=alice)
    assert hung.json() == {"status": "not ready"}


@pytest.fixture
async def strict_client(settings: Settings, embedder: LocalEmbedder) -> AsyncIterator[Client]:
    """The app allowing two failed authentications per address, refilled once a minute."""
    strict = AuthSettings(failed_auth_burst=2, failed_auth_per_minute=1)
    async with AsyncTestClient(
        app=create_app(settings.model_copy(update={"auth": strict}), embedder=embedder)
    ) as client:
        yield client


async def test_guessing_keys_at_readyz_counts_as_failed_authentication(
    strict_client: Client, alice: dict[str, str]
) -> None:
    for guess in range(3):
        ready = await strict_client.get("/readyz", headers={"Authorization": f"Bearer mem_guess{guess}"})
        assert ready.json() == {"status": "ready"}  # the probe still answers, without details
    assert (await strict_client.get("/v1/memories", headers=alice)).status_code == 429  # this address is out
    assert (await strict_client.get("/readyz")).json() == {
        "status": "ready"
    }  # a keyless probe is never limited
