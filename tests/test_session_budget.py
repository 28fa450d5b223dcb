"""One context budget per session: what SessionStart (every source) and the prompt hook inject into
one Claude Code session comes out of one character budget kept by the ledger, racing prompts of
one session included; a compaction shows the pinned memories again and gives back what they cost.

The scenario functions take any client, so tests/test_pooler_ledger.py runs them through PgBouncer.
"""

from __future__ import annotations

import asyncio

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.hooks.routes import OUTCOME_HEADER
from app.memories.ledger import SessionLedger
from app.settings import HookSettings
from tests.hook_client import ROOMY, client
from tests.test_session_ledger import NAMESPACE, SESSION, injected, prompt, start, store

__all__ = ["client"]  # the fixture of tests/hook_client.py, used here

Client = AsyncTestClient[Litestar]

REGION = "The staging database runs in eu-west-1 (Ireland)."
BACKUPS = "Staging database backups run nightly at 02:00 UTC."
REPLICA = "The staging database's read replica runs in eu-west-2."

SMALL_BUDGET = 380
"""Room for SessionStart's header and two short memories, not a third, nor a prompt's answer after."""


def context(response: object) -> str:
    body = response.json()  # type: ignore[attr-defined]
    return str(body["hookSpecificOutput"]["additionalContext"]) if body else ""


async def spent(conn: asyncpg.Connection) -> int:
    return int(
        await conn.fetchval(
            "SELECT coalesce(sum(chars), 0) FROM session_ledger WHERE session_id = $1", SESSION
        )
    )


@pytest.fixture
def hook_settings() -> HookSettings:
    return HookSettings(budget_ms=ROOMY, session_max_chars=SMALL_BUDGET)


async def test_session_start_and_prompts_share_one_budget(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    region = await store(client, alice, REGION, 0.9)
    backups = await store(client, alice, BACKUPS, 0.8)
    await store(client, alice, REPLICA, 0.7)
    started = await start(client, alice, "startup")
    assert injected(started) == [region, backups]  # the third did not fit what the session may have
    assert await spent(conn) == len(context(started)) <= SMALL_BUDGET

    answer = await prompt(client, alice, "Where does the staging database's read replica run?")
    assert (answer.json(), answer.headers[OUTCOME_HEADER]) == ({}, "budget-spent")
    assert await spent(conn) == len(context(started))


@pytest.mark.parametrize("hook_settings", [HookSettings(budget_ms=ROOMY, session_max_chars=0)])
async def test_a_budget_of_zero_leaves_sessions_unbounded(client: Client, alice: dict[str, str]) -> None:
    for content, importance in ((REGION, 0.9), (BACKUPS, 0.8)):
        await store(client, alice, content, importance)
    replica = await store(client, alice, REPLICA, 0.7)
    assert replica in injected(await start(client, alice, "startup"))


async def ledger_chars_add_up_to_what_was_injected(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    """Every answer's characters are charged to the session, to the character."""
    await store(client, alice, REGION, 0.9)
    await store(client, alice, BACKUPS, 0.8)
    started = await start(client, alice, "startup")
    replica = await store(client, alice, REPLICA, 0.7)
    answer = await prompt(client, alice, "Where does the staging database's read replica run?")
    assert injected(answer) == [replica]
    assert await spent(conn) == len(context(started)) + len(context(answer))


@pytest.mark.parametrize("hook_settings", [HookSettings(budget_ms=ROOMY, session_max_chars=100_000)])
async def test_the_ledger_charges_each_answer_what_it_injected(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    await ledger_chars_add_up_to_what_was_injected(client, alice, conn)


async def racing_prompts_stay_within_the_session_budget(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    """Six prompts of one session at once, each with memories left to give, a budget with room for
    one answer: one gets context, the others find the budget spent."""
    memories = [
        await store(client, alice, f"The staging database's replica number {n} runs in eu-west-{n}.")
        for n in range(1, 7)
    ]
    answers = await asyncio.gather(
        *(prompt(client, alice, "Where does the staging database's replica run?") for _ in range(6))
    )
    given = [memory for answer in answers for memory in injected(answer)]
    assert len(given) == 1 and set(given) <= set(memories)
    outcomes = sorted(answer.headers[OUTCOME_HEADER] for answer in answers)
    assert outcomes == ["budget-spent"] * 5 + ["injected:1"]
    assert await spent(conn) <= SMALL_BUDGET


@pytest.mark.parametrize(
    "hook_settings", [HookSettings(budget_ms=ROOMY, session_max_chars=SMALL_BUDGET, max_results=1)]
)
async def test_racing_prompts_of_one_session_never_overspend_its_budget(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    await racing_prompts_stay_within_the_session_budget(client, alice, conn)


@pytest.mark.parametrize("hook_settings", [HookSettings(budget_ms=ROOMY)])
async def test_a_compaction_shows_the_pinned_memories_again_and_nothing_else(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    body = {"content": "Never deploy on Fridays.", "namespace": NAMESPACE, "pinned": True}
    response = await client.post("/v1/memories", json=body, headers=alice)
    assert response.status_code == 201, response.text
    pinned = int(response.json()["id"])
    region = await store(client, alice, REGION, 0.9)
    assert set(injected(await start(client, alice, "startup"))) == {pinned, region}
    before = await spent(conn)

    compacted = await start(client, alice, "compact")
    assert injected(compacted) == [pinned]  # the summary may have dropped it; the rest stays given
    assert (await start(client, alice, "resume")).headers[OUTCOME_HEADER] == "no-memories"
    assert injected(await prompt(client, alice, "Which region does the staging database run in?")) == []
    # the pinned memory's first showing left the spend when it was shown again
    assert await spent(conn) < before + len(context(compacted))


async def ledger_answers_racing_take_turns(db_url: str, user_id: int, memories: list[int]) -> None:
    """Six answers of one session through the ledger at once, each wanting the whole budget: one
    gets it, the others find it spent and the memory given (each runs its own connection)."""
    pool = await asyncpg.create_pool(db_url, min_size=6, max_size=6, statement_cache_size=0)
    try:
        ledger = SessionLedger(pool, user_id, SESSION, ttl_s=3600, max_chars=SMALL_BUDGET)

        def whole_budget(unseen: list[int], remaining: int | None) -> tuple[str, list[int]]:
            assert remaining is not None
            return ("x" * remaining, unseen[:1]) if remaining >= SMALL_BUDGET else ("", [])

        given = await asyncio.gather(*(ledger.give(memories, whole_budget) for _ in range(6)))
    finally:
        await pool.close()
    assert sorted(len(answer.included) for answer in given) == [0] * 5 + [1]


async def test_ledger_answers_of_one_session_take_turns(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection, db_url: str
) -> None:
    memory = await store(client, alice, REGION)
    user_id = await conn.fetchval("SELECT user_id FROM namespaces WHERE name = $1", NAMESPACE)
    await ledger_answers_racing_take_turns(db_url, user_id, [memory])
