"""The brakes the adversarial walk turns off: a key hammering alice's data, and an address hammering
with bad keys, are answered 429 with `Retry-After` — and a 429 carries none of her data.

Alice's data is planted through an app without limits; the hammering goes to a second app on the
same database with tiny buckets that do not refill while the test runs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import httpx
import pytest
from litestar.testing import AsyncTestClient

from app.auth.scopes import READ
from app.auth.settings import AuthSettings
from app.embeddings import LocalEmbedder
from app.factory import create_app
from app.hooks.routes import OUTCOME_HEADER
from app.settings import HookSettings, Settings
from tests.fakes.tenant import (
    OWNER,
    PRIVATE,
    Client,
    Headers,
    Planted,
    answer_text,
    bearer,
    key_with,
    plant,
    sealing_settings,
    setup_keys,
)

HOOK = "/v1/hooks/claude-code/user-prompt-submit"
KEY_BURST, FAILED_BURST = 3, 2
HAMMER = 8  # requests per hammering loop: more than either burst


def configured(settings: Settings, auth: AuthSettings) -> Settings:
    return settings.model_copy(
        update={"auth": auth, "secrets": sealing_settings(), "hooks": HookSettings(budget_ms=10_000)}
    )


@pytest.fixture
async def planted(
    settings: Settings, embedder: LocalEmbedder, conn: asyncpg.Connection
) -> tuple[Planted, Headers, Headers, Settings]:
    """Alice's seeded data (planted without limits), her harness key and bob's key, and the settings
    the hammered app is built from (same database and sealing key)."""
    unlimited = configured(settings, AuthSettings(rate_limits=False))
    async with AsyncTestClient(app=create_app(unlimited, embedder=embedder)) as client:
        owner, other = await setup_keys(conn)
        seed = await plant(client, conn, owner, other)
    tiny = AuthSettings(
        key_requests_per_s=0.001,  # nothing refills while the test runs
        key_burst=KEY_BURST,
        failed_auth_per_minute=0.06,
        failed_auth_burst=FAILED_BURST,
    )
    return seed, owner, other, unlimited.model_copy(update={"auth": tiny})


@pytest.fixture
async def hammered(
    planted: tuple[Planted, Headers, Headers, Settings], embedder: LocalEmbedder
) -> AsyncIterator[Client]:
    async with AsyncTestClient(app=create_app(planted[3], embedder=embedder)) as client:
        yield client


def leaked(seed: Planted, response: httpx.Response) -> set[str]:
    return seed.markers.found_in(answer_text(response))


async def hammer(client: Client, url: str, headers: Headers) -> list[httpx.Response]:
    return [await client.get(url, headers=headers) for _ in range(HAMMER)]


def assert_limited(answers: list[httpx.Response], passed: int, first: int) -> None:
    """`passed` answers of status `first`, then only 429s, each with a Retry-After."""
    statuses = [answer.status_code for answer in answers]
    assert statuses == [first] * passed + [429] * (HAMMER - passed), statuses
    assert all(int(a.headers["retry-after"]) >= 1 for a in answers[passed:])


async def test_a_key_hammering_another_users_data_is_limited_and_learns_nothing(
    hammered: Client, planted: tuple[Planted, Headers, Headers, Settings], conn: asyncpg.Connection
) -> None:
    seed, _, bob, _ = planted
    answers = await hammer(hammered, f"/v1/memories/{seed.p_secret}/secrets", bob)
    assert_limited(answers, KEY_BURST, 404)
    assert [leaked(seed, a) for a in answers] == [set()] * HAMMER

    # the owner's own key is limited too, and its 429s carry nothing of what its 200s showed
    _, key = await key_with(conn, OWNER, (READ,))
    own = await hammer(hammered, f"/v1/memories/{seed.p_secret}", bearer(key))
    assert_limited(own, KEY_BURST, 200)
    assert all("private" in leaked(seed, a) for a in own[:KEY_BURST])
    assert [leaked(seed, a) for a in own[KEY_BURST:]] == [set()] * (HAMMER - KEY_BURST)


async def test_an_address_hammering_with_bad_keys_is_locked_out_and_learns_nothing(
    hammered: Client, planted: tuple[Planted, Headers, Headers, Settings], conn: asyncpg.Connection
) -> None:
    seed, _, _, _ = planted
    garbage = bearer("mem_" + "x" * 43)
    answers = await hammer(hammered, f"/v1/memories/{seed.p_secret}", garbage)
    assert_limited(answers, FAILED_BURST, 401)
    assert [leaked(seed, a) for a in answers] == [set()] * HAMMER

    # locked out, the address gets 429 even with alice's valid key (else 429-or-200 would tell a
    # guessed key apart), and the hook answers its empty `{}`
    _, key = await key_with(conn, OWNER, (READ,))
    valid = await hammered.get(f"/v1/memories?namespace={PRIVATE}", headers=bearer(key))
    assert valid.status_code == 429 and int(valid.headers["retry-after"]) >= 1, valid.text
    assert leaked(seed, valid) == set()
    prompt = {"prompt": f"How does {seed.markers.private} deploy, and with which token?"}
    hook = await hammered.post(f"{HOOK}?namespace={PRIVATE}", json=prompt, headers=bearer(key))
    assert (hook.status_code, hook.json(), hook.headers[OUTCOME_HEADER]) == (200, {}, "rate-limited")
    assert leaked(seed, hook) == set()
