"""POST /v1/hooks/claude-code/session-start: the namespace's pinned and most important memories at
the start of a session, aware of the SessionStart `source`, within a character budget, always 200.

Pinned memories and episodes are made as their routes leave them in the table (stored, then
`pinned` / `kind = 'episode'` set), so this file pins the hook, not those routes.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.hooks.routes import OUTCOME_HEADER
from app.settings import HookSettings
from tests.hook_client import ROOMY, client, hook_settings

__all__ = ["client", "hook_settings"]  # the fixtures of tests/hook_client.py, used here

Client = AsyncTestClient[Litestar]
START = "/v1/hooks/claude-code/session-start"
NAMESPACE = "repo:shop-api"
SESSION = "5b0e8f3a-0000-4000-8000-000000000001"
OTHER_SESSION = "5b0e8f3a-0000-4000-8000-000000000002"


def start_event(source: str, session_id: str = SESSION) -> dict[str, Any]:
    """The SessionStart payload Claude Code gives the command hook, fields we ignore included."""
    return {
        "session_id": session_id,
        "transcript_path": f"/home/dev/.claude/projects/shop-api/{session_id}.jsonl",
        "cwd": "/home/dev/shop-api",
        "hook_event_name": "SessionStart",
        "source": source,
    }


async def start(
    client: Client, headers: dict[str, str], source: str, namespace: str | None = NAMESPACE, **extra: Any
) -> Any:
    params = {"namespace": namespace} if namespace else {}
    response = await client.post(START, json=start_event(source, **extra), headers=headers, params=params)
    assert response.status_code == 200, response.text
    return response


async def store(client: Client, headers: dict[str, str], content: str, **fields: Any) -> int:
    body = {"content": content, "namespace": fields.pop("namespace", NAMESPACE), **fields}
    response = await client.post("/v1/memories", json=body, headers=headers)
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


async def pin(conn: asyncpg.Connection, memory_id: int) -> None:
    await conn.execute("UPDATE memories SET pinned = true WHERE public_id = $1", memory_id)


async def episode(
    client: Client,
    headers: dict[str, str],
    conn: asyncpg.Connection,
    content: str,
    session_id: str,
    age_min: int,
) -> int:
    """A captured exchange of `session_id`, `age_min` minutes old."""
    memory_id = await store(client, headers, content, importance=0.2)
    await conn.execute(
        "UPDATE memories SET kind = 'episode', expires_at = now() + interval '30 days',"
        " metadata = jsonb_build_object('session_id', $2::text), created_at = $3 WHERE public_id = $1",
        memory_id,
        session_id,
        datetime.now(UTC) - timedelta(minutes=age_min),
    )
    return memory_id


def context(response: Any) -> str:
    output = response.json()["hookSpecificOutput"]
    assert output["hookEventName"] == "SessionStart"
    text: str = output["additionalContext"]
    return text


def ids_in(text: str) -> list[int]:
    return [int(line[3:].split(" ", 1)[0]) for line in text.splitlines() if line.startswith("- #")]


class Seeded:
    def __init__(self, pinned: int, important: int, minor: int, mine: int, theirs: int) -> None:
        self.pinned, self.important, self.minor, self.mine, self.theirs = (
            pinned,
            important,
            minor,
            mine,
            theirs,
        )


@pytest.fixture
async def seeded(client: Client, alice: dict[str, str], conn: asyncpg.Connection) -> Seeded:
    minor = await store(
        client, alice, "The staging database is refreshed every Sunday night.", importance=0.3
    )
    important = await store(
        client, alice, "Never run kubectl apply by hand: deploys go through Terraform.", importance=0.9
    )
    pinned = await store(client, alice, "Always run the test suite before pushing.", importance=0.1)
    await pin(conn, pinned)
    mine = await episode(
        client,
        alice,
        conn,
        "User: fix the flaky login test\n\nAssistant: it raced the mock clock.",
        SESSION,
        5,
    )
    theirs = await episode(
        client,
        alice,
        conn,
        "User: bump pnpm\n\nAssistant: bumped pnpm to 9 in the workspace.",
        OTHER_SESSION,
        60,
    )
    return Seeded(pinned, important, minor, mine, theirs)


async def test_a_new_session_starts_with_pinned_then_curated_memories_and_no_episodes(
    client: Client, alice: dict[str, str], seeded: Seeded
) -> None:
    # by default the prompt hook alone recalls episodes, the ones a prompt is about
    response = await start(client, alice, "startup")
    text = context(response)
    assert NAMESPACE in text and "startup" in text
    assert ids_in(text) == [seeded.pinned, seeded.important, seeded.minor]
    assert "[episode " not in text and "Recent sessions" not in text
    assert response.headers[OUTCOME_HEADER] == "injected:3"


@pytest.mark.parametrize("hook_settings", [HookSettings(budget_ms=ROOMY, start_episodes=5)])
async def test_start_episodes_adds_other_sessions_recent_episodes_to_a_new_session(
    client: Client, alice: dict[str, str], seeded: Seeded
) -> None:
    text = context(await start(client, alice, "startup"))
    assert ids_in(text) == [seeded.pinned, seeded.important, seeded.minor, seeded.theirs]
    assert "[episode " in text and "Recent sessions" in text


async def test_compact_gets_this_sessions_own_episodes(
    client: Client, alice: dict[str, str], seeded: Seeded
) -> None:
    text = context(await start(client, alice, "compact"))
    assert ids_in(text) == [seeded.pinned, seeded.important, seeded.minor, seeded.mine]
    assert "compact" in text


@pytest.mark.parametrize("source", ["resume", "clear"])
async def test_resume_and_clear_get_pinned_and_curated_only(
    client: Client, alice: dict[str, str], seeded: Seeded, source: str
) -> None:
    text = context(await start(client, alice, source))
    assert ids_in(text) == [seeded.pinned, seeded.important, seeded.minor]


@pytest.mark.parametrize("hook_settings", [HookSettings(session_start_max_chars=600, budget_ms=ROOMY)])
async def test_context_stays_within_the_budget_and_keeps_the_pinned(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    pinned = await store(client, alice, "Pinned: the release branch is protected.", importance=0.1)
    await pin(conn, pinned)
    for n in range(15):
        await store(
            client, alice, f"Convention {n}: " + "every service logs JSON to stdout. " * 3, importance=0.8
        )
    startup = context(await start(client, alice, "startup"))
    assert len(startup) <= 600
    shown = ids_in(startup)
    assert shown[0] == pinned and 1 < len(shown) < 16
    # another session resumed: this one was given them all already (the ledger)
    resume = context(await start(client, alice, "resume", session_id=OTHER_SESSION))
    assert len(resume) <= 300 and ids_in(resume)[0] == pinned


async def test_an_empty_namespace_answers_empty(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    memory_id = await store(client, alice, "Soon forgotten.")
    assert (await client.delete(f"/v1/memories/{memory_id}", headers=alice)).status_code in (200, 204)
    response = await start(client, alice, "startup")
    assert (response.json(), response.headers[OUTCOME_HEADER]) == ({}, "no-memories")
    unknown = await start(client, alice, "startup", namespace="never-used")
    assert (unknown.json(), unknown.headers[OUTCOME_HEADER]) == ({}, "no-namespace")
    unnamed = await start(client, alice, "startup", namespace=None)
    assert (unnamed.json(), unnamed.headers[OUTCOME_HEADER]) == ({}, "no-namespace")


@pytest.mark.parametrize(
    "headers", [{}, {"Authorization": "Bearer mem_not-a-key"}], ids=["no-key", "unknown-key"]
)
async def test_a_missing_or_bad_key_answers_empty_not_401(
    client: Client, seeded: Seeded, headers: dict[str, str]
) -> None:
    response = await start(client, headers, "startup")
    assert (response.json(), response.headers[OUTCOME_HEADER]) == ({}, "unauthorized")


async def test_another_users_namespace_of_the_same_name_never_leaks(
    client: Client, alice: dict[str, str], bob: dict[str, str], seeded: Seeded
) -> None:
    bobs = await store(client, bob, "Bob's own note about his deploys.")
    text = context(await start(client, bob, "startup"))
    assert ids_in(text) == [bobs]
    assert "kubectl" not in text and "pnpm" not in text


async def test_sensitive_memories_never_appear(client: Client, alice: dict[str, str]) -> None:
    await store(client, alice, "Deploy password is hunter2", is_sensitive=True, importance=1.0)
    shown = await store(client, alice, "Deploys go out on Tuesdays.")
    text = context(await start(client, alice, "startup"))
    assert "hunter2" not in text and ids_in(text) == [shown]


async def test_another_event_is_not_answered(client: Client, alice: dict[str, str], seeded: Seeded) -> None:
    payload = start_event("startup") | {"hook_event_name": "UserPromptSubmit"}
    response = await client.post(START, json=payload, headers=alice, params={"namespace": NAMESPACE})
    assert (response.status_code, response.json(), response.headers[OUTCOME_HEADER]) == (
        200,
        {},
        "wrong-event",
    )


@pytest.mark.parametrize("hook_settings", [HookSettings(budget_ms=1)])
async def test_slower_than_the_budget_answers_empty(client: Client, alice: dict[str, str]) -> None:
    await store(client, alice, "Deploys go out on Tuesdays.")
    response = await start(client, alice, "startup")
    assert (response.json(), response.headers[OUTCOME_HEADER]) == ({}, "timeout")
