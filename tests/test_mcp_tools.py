"""The tool definitions the agent pays for on every request: their size, and that each schema lists
exactly the arguments the server decodes; and the episode-aware tools (`kinds` on recall, the
episode marker in results, `memory_promote`) against the real services."""

from __future__ import annotations

import asyncio
import re
from dataclasses import replace
from typing import Any

import asyncpg
import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.auth.scopes import READ, WRITE
from app.auth.service import AuthUser
from app.mcp.calls import Caller, Outcome, call_tool
from app.mcp.settings import McpSettings
from app.mcp.tools import TOOLS, definitions_text, with_ids_read

Client = AsyncTestClient[Litestar]

# 2,500 tokens is the budget; at the ~4 characters per token of English and JSON, 6,000
# characters keeps well inside it (`memoria bench mcp` prints the count).
MAX_DEFINITION_CHARS = 6000


def test_all_tool_definitions_fit_the_budget() -> None:
    size = len(definitions_text())
    assert size <= MAX_DEFINITION_CHARS, f"tool names, descriptions and schemas are {size} characters"


def test_each_schema_lists_exactly_its_argument_fields() -> None:
    for tool in TOOLS:
        fields = {field.encode_name for field in msgspec.structs.fields(tool.args)}
        assert set(tool.input_schema["properties"]) == fields, tool.name
        required = {field.encode_name for field in msgspec.structs.fields(tool.args) if field.required}
        assert set(tool.input_schema.get("required", [])) == required, tool.name


def test_the_store_items_schema_matches_a_new_memory() -> None:
    (store,) = [tool for tool in TOOLS if tool.name == "memory_store"]
    item = store.input_schema["properties"]["memories"]["items"]
    from app.mcp.tools import NewMemory

    assert set(item["properties"]) == {f.encode_name for f in msgspec.structs.fields(NewMemory)}
    assert item["required"] == ["content"]


def test_every_description_says_when_to_call_the_tool() -> None:
    for tool in TOOLS:
        assert 20 <= len(tool.description) <= 400, tool.name


SEARCH_WORDS = {
    "memory": {"memory_store", "memory_recall"},
    "remember": {"memory_store", "memory_recall"},
    "recall": {"memory_recall"},
    "decide": {"memory_recall"},  # "what did we decide"
}
"""The words a model searches a deferred tool list with for its memory, and the tools each must find."""


def test_the_words_a_model_searches_with_find_the_store_and_recall_tools() -> None:
    # Claude Code's ToolSearch matches whole words of a deferred tool's name, description and
    # `anthropic/searchHint` (tests/test_claude_code_mcp.py runs the real one)
    for word, wanted in SEARCH_WORDS.items():
        pattern = re.compile(rf"\b{word}\b")
        found = {
            tool.name
            for tool in TOOLS
            if pattern.search(
                " ".join((tool.name.replace("_", " "), tool.description, tool.search_hint or "")).lower()
            )
        }
        assert wanted <= found, f"{word!r} finds {sorted(found)}"


def test_the_recall_description_leaves_recalling_each_prompt_to_the_hook() -> None:
    (recall,) = [tool for tool in TOOLS if tool.name == "memory_recall"]
    assert "before starting a task" not in recall.description.lower()
    assert "hook" in recall.description


@pytest.mark.parametrize(
    ("given", "read"),
    [
        ({"id": "#4821"}, {"id": 4821}),
        ({"id": " 4821 "}, {"id": 4821}),
        ({"id": 4821, "target": "#17", "kind": "see-also"}, {"id": 4821, "target": 17, "kind": "see-also"}),
        (
            {"memories": [{"content": "x", "supersedes": ["#9", 10]}]},
            {"memories": [{"content": "x", "supersedes": [9, 10]}]},
        ),
        ({"id": "#48x1"}, {"id": "#48x1"}),  # not an id: left for the strict decoding to refuse
        ({"query": "#12"}, {"query": "#12"}),  # only id fields are read as ids
    ],
)
def test_ids_copied_as_shown_are_read_as_ids(given: dict[str, Any], read: dict[str, Any]) -> None:
    assert with_ids_read(given) == read


# ---------------------------------------------------------------------------------------------
# Episodes through the tools: the real services of a real app, called as the /mcp endpoint does.


async def _call(client: Client, caller: Caller, name: str, arguments: dict[str, Any]) -> Outcome:
    """`call_tool` on the app's own event loop (its pools live there; the test client runs the app
    in a portal thread)."""
    return await asyncio.to_thread(lambda: client.blocking_portal.call(call_tool, caller, name, arguments))


@pytest.fixture
async def agent(client: Client, alice: dict[str, str], conn: asyncpg.Connection) -> Caller:
    """alice's agent, installed for namespace `proj`, with a read-write key."""
    return await alice_agent(client, conn)


async def alice_agent(client: Client, conn: asyncpg.Connection) -> Caller:
    """What the `agent` fixture is (for other test modules' fixtures; `alice` must exist)."""
    user_id = await conn.fetchval("SELECT id FROM users WHERE name = 'alice'")
    state = client.app.state
    return Caller(
        user=AuthUser(id=user_id, name="alice", key_id=0, scopes=frozenset({READ, WRITE})),
        namespace="proj",
        memories=state.memory_service,
        recall=state.recall_service,
        links=state.link_service,
        settings=McpSettings(),
        read_deadline_s=10.0,
    )


async def _seed(client: Client, alice: dict[str, str], conn: asyncpg.Connection) -> tuple[int, int]:
    """(curated id, episode id), both about the same deploy."""
    body = [
        {"content": "Deploys of the billing service go through Terraform.", "namespace": "proj"},
        {
            "content": "User: how do we deploy billing?\n\nAssistant: terraform apply, billing stack.",
            "namespace": "proj",
        },
    ]
    response = await client.post("/v1/memories", json=body, headers=alice)
    assert response.status_code == 201, response.text
    curated, episode = (r["id"] for r in response.json()["results"])
    await conn.execute(
        "UPDATE memories SET kind = 'episode', importance = 0.2, expires_at = now() + interval '5 days'"
        " WHERE public_id = $1",
        episode,
    )
    return curated, episode


def _ids(text: str) -> list[int]:
    return [int(line[1:].split()[0]) for line in text.splitlines() if line.startswith("#")]


async def test_recall_marks_episodes_and_filters_by_kind(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection, agent: Caller
) -> None:
    curated, episode = await _seed(client, alice, conn)
    both = await _call(client, agent, "memory_recall", {"query": "how do we deploy billing?"})
    assert not both.is_error, both.text
    assert sorted(_ids(both.text)) == sorted([curated, episode])
    headers = {int(line[1:].split()[0]): line for line in both.text.splitlines() if line.startswith("#")}
    assert " episode score " in headers[episode] and " episode " not in headers[curated]
    only = await _call(
        client, agent, "memory_recall", {"query": "how do we deploy billing?", "kinds": ["episode"]}
    )
    assert _ids(only.text) == [episode]
    for kinds in (["summary"], ["episode", "episode"]):
        bad = await _call(client, agent, "memory_recall", {"query": "deploy", "kinds": kinds})
        assert (
            bad.is_error and bad.text.startswith("invalid arguments for memory_recall") and "kind" in bad.text
        )


async def test_promote_keeps_an_episode_for_good(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection, agent: Caller
) -> None:
    _, episode = await _seed(client, alice, conn)
    promoted = await _call(client, agent, "memory_promote", {"id": episode, "pinned": True})
    assert not promoted.is_error, promoted.text
    assert promoted.text.startswith("Promoted.") and " pinned " in promoted.text
    row = await conn.fetchrow(
        "SELECT kind, pinned, expires_at, importance FROM memories WHERE public_id = $1", episode
    )
    assert (row["kind"], row["pinned"], row["expires_at"]) == ("memory", True, None)
    assert row["importance"] >= 0.5
    missing = await _call(client, agent, "memory_promote", {"id": 2**53})
    assert missing.is_error and missing.text.startswith("not found")


async def test_a_memory_is_found_by_its_id_as_shown_and_a_bad_id_is_refused_clearly(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection, agent: Caller
) -> None:
    curated, _ = await _seed(client, alice, conn)
    for given in (curated, str(curated), f"#{curated}"):
        got = await _call(client, agent, "memory_get", {"id": given})
        assert not got.is_error and got.text.startswith(f"#{curated}"), got.text
    bad = await _call(client, agent, "memory_get", {"id": "the deploy one"})
    assert bad.is_error and bad.text.startswith("invalid arguments for memory_get") and "`$.id`" in bad.text


async def test_promote_needs_the_write_scope(
    client: Client, alice: dict[str, str], conn: asyncpg.Connection, agent: Caller
) -> None:
    _, episode = await _seed(client, alice, conn)
    reader = replace(agent, user=replace(agent.user, scopes=frozenset({READ})))
    refused = await _call(client, reader, "memory_promote", {"id": episode})
    assert refused.is_error and "`write` scope" in refused.text
    assert await conn.fetchval("SELECT kind FROM memories WHERE public_id = $1", episode) == "episode"
