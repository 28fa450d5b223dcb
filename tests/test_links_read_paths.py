"""A superseded memory never reaches the hooks: the prompt hook (UserPromptSubmit) recalls its new
version in its place, and session start leaves it out, pinned or important as it may be; undoing
the supersede gives it back to both. (MCP's read paths: tests/test_mcp_links.py.)"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.embeddings import LocalEmbedder
from app.factory import create_app
from app.settings import HookSettings, Settings

Client = AsyncTestClient[Litestar]
NAMESPACE = "repo:okapi-3"
PROMPT_HOOK = "/v1/hooks/claude-code/user-prompt-submit"
START_HOOK = "/v1/hooks/claude-code/session-start"
OLD = "Background jobs of okapi-3 run on Celery with RabbitMQ as the broker."
NEW = "Background jobs of okapi-3 moved to Dramatiq on Redis streams as the broker."
PROMPT = "Which broker do the background jobs of okapi-3 run on?"
ROOMY = 10_000  # a budget a busy machine cannot make these tests race


@pytest.fixture
async def client(settings: Settings, embedder: LocalEmbedder) -> AsyncIterator[Client]:
    app = create_app(settings.model_copy(update={"hooks": HookSettings(budget_ms=ROOMY)}), embedder=embedder)
    async with AsyncTestClient(app=app) as test_client:
        yield test_client


async def store(client: Client, headers: dict[str, str], content: str, **fields: Any) -> int:
    answer = await client.post(
        "/v1/memories", json={"content": content, "namespace": NAMESPACE, **fields}, headers=headers
    )
    assert answer.status_code == 201, answer.text
    return int(answer.json()["id"])


async def context(client: Client, headers: dict[str, str], path: str, event: dict[str, Any]) -> str:
    answer = await client.post(path, json=event, headers=headers, params={"namespace": NAMESPACE})
    assert answer.status_code == 200, answer.text
    output = answer.json().get("hookSpecificOutput") or {}
    text: str = output.get("additionalContext", "")
    return text


def prompt_event(session: str) -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": f"/home/dev/.claude/projects/okapi-3/{session}.jsonl",
        "cwd": "/home/dev/okapi-3",
        "hook_event_name": "UserPromptSubmit",
        "prompt": PROMPT,
    }


def start_event(session: str) -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": f"/home/dev/.claude/projects/okapi-3/{session}.jsonl",
        "cwd": "/home/dev/okapi-3",
        "hook_event_name": "SessionStart",
        "source": "startup",
    }


async def test_the_prompt_hook_recalls_the_new_version_in_place_of_the_old(
    client: Client, alice: dict[str, str]
) -> None:
    old = await store(client, alice, OLD, category="decision")
    before = await context(client, alice, PROMPT_HOOK, prompt_event("a0000000-0000-4000-8000-000000000001"))
    assert f"#{old} " in before, before  # the hook finds it while it is current
    new = await store(client, alice, NEW, category="decision", supersedes=[old])
    after = await context(client, alice, PROMPT_HOOK, prompt_event("a0000000-0000-4000-8000-000000000002"))
    assert NEW in after and f"#{new} " in after, after
    assert OLD not in after and f"#{old} " not in after, after
    undone = await client.delete(f"/v1/memories/{new}/links/supersedes/{old}", headers=alice)
    assert undone.status_code == 204, undone.text
    back = await context(client, alice, PROMPT_HOOK, prompt_event("a0000000-0000-4000-8000-000000000003"))
    assert OLD in back, back


async def test_session_start_leaves_a_superseded_memory_out_even_pinned(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection
) -> None:
    old = await store(client, alice, OLD, importance=0.9)
    pinned_old = await store(client, alice, "Pinned: okapi-3 releases from the release-train branch.")
    await conn.execute("UPDATE memories SET pinned = true WHERE public_id = $1", pinned_old)
    new = await store(client, alice, NEW, importance=0.5, supersedes=[old])
    pinned_new = await store(
        client, alice, "Pinned: okapi-3 releases from main, tagged.", supersedes=[pinned_old]
    )
    await conn.execute("UPDATE memories SET pinned = true WHERE public_id = $1", pinned_new)
    started = await context(client, alice, START_HOOK, start_event("b0000000-0000-4000-8000-000000000001"))
    assert NEW in started and "releases from main" in started, started
    assert OLD not in started and "release-train" not in started, started
    assert f"#{old} " not in started and f"#{pinned_old} " not in started and f"#{new} " in started
