"""The per-session ledger: a memory a Claude Code session was given (at its start or by a prompt)
is not injected into that session again, another session gets it, the records expire and the
expiry sweep deletes them, and a session id unfit for the ledger never makes a hook fail.

The scenario functions take any client, so tests/test_pooler_ledger.py runs them through PgBouncer.
"""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.hooks.routes import OUTCOME_HEADER
from app.memories.expiry import EXPIRE_JOB, ExpiryJobs
from app.memories.ledger import MAX_SESSION_ID_CHARS, session_key
from app.settings import HookSettings, MemorySettings
from tests.hook_client import ROOMY, client, hook_settings

__all__ = ["client", "hook_settings"]  # the fixtures of tests/hook_client.py, used here

Client = AsyncTestClient[Litestar]
PROMPT = "/v1/hooks/claude-code/user-prompt-submit"
START = "/v1/hooks/claude-code/session-start"
NAMESPACE = "repo:shop-api"
SESSION = "7d3e0c1a-0000-4000-8000-000000000001"
OTHER_SESSION = "7d3e0c1a-0000-4000-8000-000000000002"
QUESTION = "Which region does the staging database run in?"


async def store(client: Client, headers: dict[str, str], content: str, importance: float = 0.5) -> int:
    body = {"content": content, "namespace": NAMESPACE, "importance": importance}
    response = await client.post("/v1/memories", json=body, headers=headers)
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


async def prompt(
    client: Client, headers: dict[str, str], text: str = QUESTION, session_id: Any = SESSION
) -> Any:
    payload = {"session_id": session_id, "hook_event_name": "UserPromptSubmit", "prompt": text}
    response = await client.post(PROMPT, json=payload, headers=headers, params={"namespace": NAMESPACE})
    assert response.status_code == 200, response.text
    return response


async def start(client: Client, headers: dict[str, str], source: str, session_id: str = SESSION) -> Any:
    payload = {"session_id": session_id, "hook_event_name": "SessionStart", "source": source}
    response = await client.post(START, json=payload, headers=headers, params={"namespace": NAMESPACE})
    assert response.status_code == 200, response.text
    return response


def injected(response: Any) -> list[int]:
    """The memory ids in the answer's additionalContext (none for `{}`)."""
    body = response.json()
    if not body:
        return []
    text = body["hookSpecificOutput"]["additionalContext"]
    return [int(line[3:].split(" ", 1)[0]) for line in text.splitlines() if line.startswith("- #")]


async def a_memory_reaches_each_session_once(client: Client, alice: dict[str, str]) -> None:
    """SessionStart gives the session the namespace's memories; neither prompt gets them again, a
    memory stored since is given once; compact and resume add nothing; another session gets them."""
    region = await store(client, alice, "The staging database runs in eu-west-1 (Ireland).", 0.9)
    backups = await store(client, alice, "Staging database backups run nightly at 02:00 UTC.", 0.8)
    assert {region, backups} <= set(injected(await start(client, alice, "startup")))

    first = await prompt(client, alice)
    assert (injected(first), first.headers[OUTCOME_HEADER]) == ([], "all-seen")
    replica = await store(client, alice, "The staging database's read replica runs in eu-west-2.", 0.7)
    assert injected(await prompt(client, alice)) == [replica]
    again = await prompt(client, alice)
    assert (injected(again), again.headers[OUTCOME_HEADER]) == ([], "all-seen")
    for source in ("compact", "resume"):
        assert (await start(client, alice, source)).headers[OUTCOME_HEADER] == "no-memories"

    other = injected(await prompt(client, alice, session_id=OTHER_SESSION))
    assert {region, backups, replica} <= set(other)


async def test_a_memory_is_injected_once_per_session_across_session_start_and_prompts(
    client: Client, alice: dict[str, str]
) -> None:
    await a_memory_reaches_each_session_once(client, alice)


@pytest.mark.parametrize("hook_settings", [HookSettings(budget_ms=ROOMY, max_results=1)])
async def test_the_next_best_unseen_memory_fills_the_slot_of_one_already_given(
    client: Client, alice: dict[str, str]
) -> None:
    await store(client, alice, "The staging database runs in eu-west-1 (Ireland).")
    await store(client, alice, "The staging database's read replica runs in eu-west-2.")
    first, second = injected(await prompt(client, alice)), injected(await prompt(client, alice))
    assert len(first) == len(second) == 1 and first != second


@pytest.mark.parametrize("hook_settings", [HookSettings(budget_ms=ROOMY, ledger_ttl_hours=0)])
async def test_a_ledger_switched_off_injects_the_same_memory_every_time(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    memory = await store(client, alice, "The staging database runs in eu-west-1 (Ireland).")
    assert injected(await prompt(client, alice)) == injected(await prompt(client, alice)) == [memory]
    assert await conn.fetchval("SELECT count(*) FROM session_ledger") == 0


async def test_ledger_rows_expire_and_the_sweep_deletes_them(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection, db_url: str
) -> None:
    memory = await store(client, alice, "The staging database runs in eu-west-1 (Ireland).")
    assert injected(await prompt(client, alice)) == [memory]
    row = await conn.fetchrow("SELECT injected_at, expires_at FROM session_ledger")
    assert abs((row["expires_at"] - row["injected_at"]).total_seconds() - 24 * 3600) < 5
    # the first record started the sweep's chain, due when the first row can expire
    assert (
        await conn.fetchval("SELECT count(*) FROM jobs WHERE kind = $1 AND state = 'queued'", EXPIRE_JOB) == 1
    )

    await conn.execute("UPDATE session_ledger SET expires_at = now() - interval '1 second'")
    assert injected(await prompt(client, alice)) == [memory]  # expired, not yet swept: unseen again
    await conn.execute("UPDATE session_ledger SET expires_at = now() - interval '1 second'")
    pool = await asyncpg.create_pool(db_url, min_size=1, max_size=1)
    try:
        await ExpiryJobs(pool, MemorySettings()).sweep()
    finally:
        await pool.close()
    assert await conn.fetchval("SELECT count(*) FROM session_ledger") == 0


async def test_a_deleted_memory_takes_its_ledger_rows_with_it(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    memory = await store(client, alice, "The staging database runs in eu-west-1 (Ireland).")
    assert injected(await prompt(client, alice)) == [memory]
    await conn.execute("DELETE FROM memories WHERE public_id = $1", memory)
    assert await conn.fetchval("SELECT count(*) FROM session_ledger") == 0


@pytest.mark.parametrize(
    "session_id",
    [
        "x" * (MAX_SESSION_ID_CHARS + 1),
        "x" * 100_000,
        "../../etc/passwd",
        "abc\ndef",
        "",
        "'; DROP TABLE session_ledger; --",
        "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    ],
    ids=["one-too-long", "huge", "path", "newline", "empty", "sql", "a-credential"],
)
async def test_an_unusable_session_id_is_served_without_the_ledger(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection, session_id: str
) -> None:
    memory = await store(client, alice, "The staging database runs in eu-west-1 (Ireland).")
    for _ in range(2):
        assert injected(await prompt(client, alice, session_id=session_id)) == [memory]
        assert memory in injected(await start(client, alice, "startup", session_id=session_id))
    assert await conn.fetchval("SELECT count(*) FROM session_ledger") == 0


@pytest.mark.parametrize("session_id", [12345, ["a"], {"id": "a"}])
async def test_a_session_id_that_is_not_text_is_refused_with_a_4xx_never_a_500(
    client: Client, alice: dict[str, str], session_id: object
) -> None:
    payload = {"session_id": session_id, "hook_event_name": "UserPromptSubmit", "prompt": QUESTION}
    response = await client.post(PROMPT, json=payload, headers=alice, params={"namespace": NAMESPACE})
    assert 400 <= response.status_code < 500


def test_session_ids_claude_code_sends_are_kept_as_they_are() -> None:
    assert session_key("5b0e8f3a-0000-4000-8000-000000000001") == "5b0e8f3a-0000-4000-8000-000000000001"
    assert session_key("x" * MAX_SESSION_ID_CHARS) == "x" * MAX_SESSION_ID_CHARS
    assert session_key(None) is None
