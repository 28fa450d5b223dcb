"""The per-session ledger through a real PgBouncer in transaction pooling mode (tests/pgbouncer.py):
each answer is one short transaction holding the session's transaction-scoped lock, so consecutive
or racing hook calls of one session may run on different server connections and still never
inject a memory twice nor overspend the session's context budget."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.settings import HookSettings
from tests.hook_client import ROOMY, client, hook_settings
from tests.test_session_budget import (
    SMALL_BUDGET,
    ledger_answers_racing_take_turns,
    ledger_chars_add_up_to_what_was_injected,
)
from tests.test_session_ledger import (
    NAMESPACE,
    SESSION,
    a_memory_reaches_each_session_once,
    injected,
    prompt,
    store,
)

__all__ = ["client", "hook_settings"]  # the fixtures of tests/hook_client.py, used here

Client = AsyncTestClient[Litestar]


@pytest.fixture
def app_db_url(pgbouncer_db_url: str) -> str:
    """Every app in this module goes through PgBouncer, whether or not PGBOUNCER_TESTS is set."""
    return pgbouncer_db_url


async def test_a_memory_reaches_each_session_once_through_pgbouncer(
    client: Client, alice: dict[str, str]
) -> None:
    await a_memory_reaches_each_session_once(client, alice)


async def test_concurrent_prompts_of_one_session_through_pgbouncer_share_a_memory_once(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    memory = await store(client, alice, "The staging database runs in eu-west-1 (Ireland).")
    answers = await asyncio.gather(*(prompt(client, alice) for _ in range(6)))
    assert [memory_id for answer in answers for memory_id in injected(answer)] == [memory]
    rows = await conn.fetchval("SELECT count(*) FROM session_ledger WHERE session_id = $1", SESSION)
    assert rows == 1


@pytest.mark.parametrize("hook_settings", [HookSettings(budget_ms=ROOMY, session_max_chars=100_000)])
async def test_the_ledger_charges_each_answer_what_it_injected_through_pgbouncer(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    await ledger_chars_add_up_to_what_was_injected(client, alice, conn)


@pytest.mark.parametrize("hook_settings", [HookSettings(budget_ms=ROOMY, session_max_chars=SMALL_BUDGET)])
async def test_ledger_answers_of_one_session_take_turns_through_pgbouncer(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection, pgbouncer_db_url: str
) -> None:
    memory = await store(client, alice, "The staging database runs in eu-west-1 (Ireland).")
    user_id = await conn.fetchval("SELECT user_id FROM namespaces WHERE name = $1", NAMESPACE)
    await ledger_answers_racing_take_turns(pgbouncer_db_url, user_id, [memory])
