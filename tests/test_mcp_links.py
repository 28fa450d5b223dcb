"""Typed links through the MCP tools: `memory_store` with `supersedes`, `memory_link` (make, undo,
refusals), and what `memory_recall`, `memory_list` and `memory_get` show of versions and fixes: a
superseded memory never reaches them unless `include_superseded` asks for it."""

from __future__ import annotations

import re
from dataclasses import dataclass

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.mcp.calls import Caller
from app.mcp.render import stored_text, suggestions_text
from app.memories.schemas import StoreResult
from tests.test_mcp_tools import _call, alice_agent

Client = AsyncTestClient[Litestar]

OLD = "Background jobs run on Celery with RabbitMQ as the broker"
NEW = "We moved background jobs to Dramatiq on Redis streams"


@pytest.fixture
async def agent(client: Client, alice: dict[str, str], conn: asyncpg.Connection) -> Caller:
    """alice's agent, installed for namespace `proj`, with a read-write key."""
    return await alice_agent(client, conn)


def _ids(text: str) -> list[int]:
    return [int(line[1:].split()[0]) for line in text.splitlines() if line.startswith("#")]


def _header(text: str, memory_id: int) -> str:
    return next(line for line in text.splitlines() if line.startswith(f"#{memory_id} "))


async def _store(client: Client, caller: Caller, content: str, **fields: object) -> tuple[int, str]:
    stored = await _call(client, caller, "memory_store", {"memories": [{"content": content, **fields}]})
    assert not stored.is_error, stored.text
    found = re.match(r"Stored 1: #(\d+) ", stored.text)
    assert found, stored.text
    return int(found.group(1)), stored.text


async def test_store_with_supersedes_says_so_and_recall_shows_only_the_new_version(
    client: Client, agent: Caller
) -> None:
    old, _ = await _store(client, agent, OLD)
    new, answer = await _store(client, agent, NEW, supersedes=[old])
    assert f"#{new} ns:proj (supersedes #{old})" in answer
    # worded as the old version, the new one answers in its place and says what it replaces
    found = await _call(client, agent, "memory_recall", {"query": "Celery RabbitMQ broker"})
    assert not found.is_error, found.text
    assert old not in _ids(found.text) and _ids(found.text)[:1] == [new]
    assert f" replaces #{old}" in _header(found.text, new)
    listed = await _call(client, agent, "memory_list", {})
    assert _ids(listed.text) == [new]
    # asked for, the old version comes back marked
    everything = await _call(
        client, agent, "memory_recall", {"query": "Celery RabbitMQ broker", "include_superseded": True}
    )
    assert f" superseded by #{new}" in _header(everything.text, old)
    assert " valid until " in _header(everything.text, old)


async def test_a_store_superseding_another_namespaces_memory_stores_nothing(
    client: Client, agent: Caller, conn: asyncpg.Connection
) -> None:
    elsewhere, _ = await _store(client, agent, OLD)
    stored = await _call(
        client,
        agent,
        "memory_store",
        {"memories": [{"content": NEW, "supersedes": [elsewhere]}], "namespace": "other"},
    )
    assert stored.is_error and stored.text.startswith("invalid arguments") and "namespace" in stored.text
    assert await conn.fetchval("SELECT count(*) FROM memories WHERE content = $1", NEW) == 0


async def test_memory_link_makes_lists_and_undoes_a_link(client: Client, agent: Caller) -> None:
    old, _ = await _store(client, agent, OLD)
    new, _ = await _store(client, agent, NEW)
    made = await _call(client, agent, "memory_link", {"id": new, "kind": "supersedes", "target": old})
    assert not made.is_error, made.text
    done, header, line = made.text.splitlines()
    assert (done, header) == (f"Linked #{new} supersedes #{old}.", f"#{new} links:")
    # (the supersede rule may have linked the two on store already: then the link shows its reason)
    assert line.startswith(f"  this supersedes #{old}") and line.endswith(f": {OLD}"), line
    got = await _call(client, agent, "memory_get", {"id": old})
    assert f"superseded by #{new} (recall shows that one instead)" in got.text
    assert re.search(r"^valid until \d{4}-\d\d-\d\d", got.text, re.MULTILINE), got.text
    assert re.search(rf"^  #{new} supersedes this( \(auto: .*\))?: {NEW}$", got.text, re.MULTILINE), got.text
    assert old not in _ids((await _call(client, agent, "memory_recall", {"query": "Celery"})).text)

    undone = await _call(
        client, agent, "memory_link", {"id": new, "kind": "supersedes", "target": old, "undo": True}
    )
    assert undone.text == f"Removed #{new} supersedes #{old}.\n#{new} has no links."
    assert old in _ids((await _call(client, agent, "memory_recall", {"query": "Celery RabbitMQ"})).text)
    got = await _call(client, agent, "memory_get", {"id": old})
    assert "superseded by" not in got.text and "valid until" not in got.text
    again = await _call(
        client, agent, "memory_link", {"id": new, "kind": "supersedes", "target": old, "undo": True}
    )
    assert again.is_error and again.text.startswith("not found: no link")


async def test_memory_link_refusals_are_tool_errors(client: Client, agent: Caller) -> None:
    a, _ = await _store(client, agent, "Deploys go out on Tuesdays")
    b, _ = await _store(client, agent, "Deploys go out on Thursdays", supersedes=[a])
    cycle = await _call(client, agent, "memory_link", {"id": a, "kind": "supersedes", "target": b})
    assert cycle.is_error and cycle.text.startswith("conflict:") and "cycle" in cycle.text
    itself = await _call(client, agent, "memory_link", {"id": a, "kind": "see-also", "target": a})
    assert itself.is_error and itself.text.startswith("invalid arguments:")
    kind = await _call(client, agent, "memory_link", {"id": a, "kind": "replaces", "target": b})
    assert kind.is_error and kind.text.startswith("invalid arguments for memory_link")
    missing = await _call(client, agent, "memory_link", {"id": a, "kind": "see-also", "target": 2**52})
    assert missing.is_error and missing.text.startswith("not found:")


async def test_a_fix_comes_along_with_its_problem_in_recall(client: Client, agent: Caller) -> None:
    problem, _ = await _store(client, agent, "CI fails with 'too many open files' on the integration suite")
    fix, _ = await _store(client, agent, "Raise ulimit -n to 65536 in the runner image")
    linked = await _call(client, agent, "memory_link", {"id": problem, "kind": "resolved-by", "target": fix})
    assert not linked.is_error, linked.text
    found = await _call(
        client, agent, "memory_recall", {"query": "too many open files integration suite", "limit": 1}
    )
    assert _ids(found.text) == [problem, fix]
    assert f" resolves #{problem} " in _header(found.text, fix)


async def test_recall_as_of_answers_what_held_then(
    client: Client, agent: Caller, alice: dict[str, str]
) -> None:
    old, _ = await _store(client, agent, "The on-call rotation is weekly")
    new, _ = await _store(client, agent, "The on-call rotation is fortnightly")
    for memory_id, since in ((old, "2026-01-01T00:00:00Z"), (new, "2026-03-01T00:00:00Z")):
        patched = await client.patch(f"/v1/memories/{memory_id}", json={"valid_from": since}, headers=alice)
        assert patched.status_code == 200, patched.text
    linked = await _call(client, agent, "memory_link", {"id": new, "kind": "supersedes", "target": old})
    assert not linked.is_error, linked.text
    got = await _call(client, agent, "memory_get", {"id": old})
    assert "valid from 2026-01-01 00:00 until 2026-03-01 00:00" in got.text
    then = await _call(
        client, agent, "memory_recall", {"query": "on-call rotation", "as_of": "2026-02-01T00:00:00Z"}
    )
    assert _ids(then.text) == [old]
    now = await _call(client, agent, "memory_recall", {"query": "on-call rotation"})
    assert _ids(now.text) == [new]
    bad = await _call(client, agent, "memory_recall", {"query": "on-call", "as_of": "last week"})
    assert bad.is_error and bad.text.startswith("invalid arguments for memory_recall") and "as_of" in bad.text


@dataclass(frozen=True)
class _Offer:
    id: int
    content: str
    reason: str


def test_the_store_answer_offers_the_supersede_rules_suggestions() -> None:
    assert suggestions_text(12, []) == []
    assert suggestions_text(12, [_Offer(5, "The API listens on 8080.", "8080 \u2192 9090")]) == [
        "#12 looks like it replaces #5 (\u201cThe API listens on 8080.\u201d): 8080 \u2192 9090. "
        "If it does: memory_link id=12 kind=supersedes target=5"
    ]
    plain = StoreResult(id=12, namespace="proj", duplicate=False, embedded=True, superseded=[4, 3])
    assert stored_text([plain]) == "Stored 1: #12 ns:proj (supersedes #4, #3)"


async def test_another_tenants_memory_answers_as_a_missing_one(
    client: Client, agent: Caller, bob: dict[str, str]
) -> None:
    mine, _ = await _store(client, agent, "Alice's service listens on port 8080")
    stored = await client.post("/v1/memories", json={"content": "Bob's port is 7070"}, headers=bob)
    assert stored.status_code == 201, stored.text
    theirs, missing = int(stored.json()["id"]), 2**52 + 12345
    for kind in ("supersedes", "see-also"):
        probe = await _call(client, agent, "memory_link", {"id": mine, "kind": kind, "target": theirs})
        absent = await _call(client, agent, "memory_link", {"id": mine, "kind": kind, "target": missing})
        assert probe.is_error and absent.is_error
        assert probe.text.replace(str(theirs), "X") == absent.text.replace(str(missing), "X")
    replaced = await _call(
        client, agent, "memory_store", {"memories": [{"content": "x", "supersedes": [theirs]}]}
    )
    assert replaced.is_error and replaced.text.startswith("not found:")
    got = await client.get(f"/v1/memories/{theirs}", headers=bob)
    assert got.json()["valid_to"] is None and got.json()["superseded_by"] is None
