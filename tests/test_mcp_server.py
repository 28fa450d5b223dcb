"""End to end: the official MCP Python client over real HTTP against a real `memoria serve` (one
process for the module, on a database of its own), through `/mcp`."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from mcp.shared.exceptions import MCPError

from app.auth.service import create_key, get_or_create_user
from app.mcp.tools import TOOLS, definitions_text
from memoria_bench.mcp import McpBenchOptions, mcp_session, measure
from memoria_bench.serve import served_api
from tests.conftest import template_copy

pytestmark = pytest.mark.e2e

# the shipped limits, not the benchmarks' (served_api lifts them for measuring)
LIMITS = {"MEMORIA_AUTH__KEY_REQUESTS_PER_S": "20", "MEMORIA_AUTH__KEY_BURST": "200"}


@dataclass(frozen=True)
class Served:
    base: str
    db_url: str

    async def key(self, user: str, *scopes: str) -> str:
        return (await self.key_row(user, *scopes))[1]

    async def key_row(self, user: str, *scopes: str) -> tuple[int, str]:
        conn = await asyncpg.connect(self.db_url)
        try:
            await get_or_create_user(conn, user)
            created = await create_key(conn, user, scopes=scopes or ("read", "write"))
        finally:
            await conn.close()
        return created.id, created.key


@pytest.fixture(scope="module")
def module_db(pg_admin_url: str, template_url: str) -> Iterator[str]:
    with template_copy(pg_admin_url, "t_mcp") as url:
        yield url


@pytest.fixture(scope="module")
async def served(module_db: str) -> AsyncIterator[Served]:
    env = {"MEMORIA_DATABASE__URL": module_db, **LIMITS}
    async with served_api(env, "--no-migrate", unset=["MEMORIA_DATABASE__READ_URL"]) as api:
        yield Served(api.base, module_db)


def text_of(result: object) -> str:
    """The text of a tool result's single text block."""
    content = result.content  # type: ignore[attr-defined]
    assert len(content) == 1, content
    return str(content[0].text)


def _user() -> str:
    return f"u{uuid.uuid4().hex[:8]}"


async def test_initialize_lists_the_tools_with_schemas(served: Served) -> None:
    key = await served.key(_user())
    for mode in ("auto", "legacy"):  # the 2026 per-request envelope and the initialize handshake
        async with mcp_session(served.base, key, mode=mode) as client:
            assert client.server_info is None or client.server_info.name == "memoria"
            listed = (await client.list_tools()).tools
            assert [t.name for t in listed] == [t.name for t in TOOLS]
            assert all(t.description and t.input_schema["type"] == "object" for t in listed)
            recall = next(t for t in listed if t.name == "memory_recall")
            assert recall.annotations is not None and recall.annotations.read_only_hint is True
            # what Claude Code's ToolSearch matches besides the name and description
            assert "what did we decide" in (recall.meta or {}).get("anthropic/searchHint", "")


async def test_every_tool_round_trip(served: Served) -> None:
    key = await served.key(_user())
    async with mcp_session(served.base, key, namespace="repo:shop") as client:
        stored = await client.call_tool(
            "memory_store",
            {
                "memories": [
                    {
                        "content": "We deploy the shop with Terraform; never kubectl apply by hand.",
                        "category": "decision",
                        "tags": ["deploy"],
                        "importance": 0.9,
                        "expanded_keywords": "infrastructure rollout release",
                    },
                    {"content": "The user prefers pytest over unittest.", "category": "preference"},
                ]
            },
        )
        assert not stored.is_error, text_of(stored)
        assert text_of(stored).startswith("Stored 2: #")
        assert "ns:repo:shop" in text_of(stored)  # the connection's namespace, not `default`

        again = await client.call_tool(
            "memory_store", {"memories": [{"content": "The user prefers pytest over unittest."}]}
        )
        assert "(already stored)" in text_of(again)

        recalled = await client.call_tool(
            "memory_recall", {"query": "how do we ship infrastructure?", "explain": True}
        )
        text = text_of(recalled)
        assert not recalled.is_error, text
        first = next(line for line in text.splitlines() if line.startswith("#"))
        assert "[decision]" in first and " score " in first
        assert "\n  fusion: " in text and "weights lexical 1 (settings)" in text  # how legs were weighed
        memory_id = int(first[1:].split()[0])
        assert "why: lexical #1, dense #1" in text

        got = await client.call_tool("memory_get", {"id": memory_id})
        assert "never kubectl apply by hand" in text_of(got)
        assert "keywords: infrastructure rollout release" in text_of(got)

        updated = await client.call_tool(
            "memory_update", {"id": memory_id, "importance": 0.3, "tags": ["ops"]}
        )
        assert not updated.is_error, text_of(updated)
        assert "importance 0.3" in text_of(updated) and "tags:ops" in text_of(updated)

        listed = await client.call_tool("memory_list", {"order": "important"})
        lines = [line for line in text_of(listed).splitlines() if line.startswith("#")]
        assert len(lines) == 2 and "[preference]" in lines[0]  # 0.5 now outranks 0.3

        recent = await client.call_tool("memory_list", {"limit": 1})
        assert "1 memories, newest first" in text_of(recent)

        forgot = await client.call_tool("memory_forget", {"id": memory_id})
        assert text_of(forgot) == f"Forgot #{memory_id}."
        gone = await client.call_tool("memory_get", {"id": memory_id})
        assert gone.is_error and text_of(gone) == f"not found: memory {memory_id} not found"


async def test_namespace_argument_overrides_the_connection_namespace(served: Served) -> None:
    key = await served.key(_user())
    async with mcp_session(served.base, key, namespace="repo:a") as client:
        stored = await client.call_tool(
            "memory_store", {"memories": [{"content": "Staging lives in eu-west-3."}], "namespace": "ops"}
        )
        assert "ns:ops" in text_of(stored)
        in_connection = await client.call_tool("memory_list", {})
        assert not in_connection.is_error
        assert text_of(in_connection).startswith("No memories in namespace repo:a yet")
        nothing = await client.call_tool("memory_recall", {"query": "where is staging?"})
        assert not nothing.is_error and text_of(nothing).startswith("No memories in namespace repo:a yet")
        in_ops = await client.call_tool("memory_recall", {"query": "where is staging?", "namespace": "ops"})
        assert "eu-west-3" in text_of(in_ops)


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        (
            "memory_get",
            {"id": "seven"},  # "7" and "#7" are ids as a model copies them (app.mcp.tools.with_ids_read)
            "invalid arguments for memory_get: Expected `int`, got `str` - at `$.id`",
        ),
        ("memory_get", {}, "invalid arguments for memory_get: Object missing required field `id`"),
        ("memory_get", {"id": 0}, "invalid arguments for memory_get: Expected `int` >= 1 - at `$.id`"),
        (
            "memory_store",
            {"memories": []},
            "invalid arguments for memory_store: Expected `array` of length >= 1",
        ),
        ("memory_store", {"memories": [{"content": "   "}]}, "invalid arguments: content must not be empty"),
        ("memory_store", {"memories": [{"content": "x", "importance": 2}]}, "Expected `float` <= 1.0"),
        (
            "memory_store",
            {"memories": [{"content": "x"}], "colour": "red"},
            "Object contains unknown field `colour`",
        ),
        (
            "memory_recall",
            {"query": ""},
            "invalid arguments for memory_recall: Expected `str` of length >= 1",
        ),
        ("memory_recall", {"query": "x", "sort": "best"}, "Invalid enum value 'best' - at `$.sort`"),
        ("memory_recall", {"query": "x", "limit": 500}, "Expected `int` <= 50"),
        ("memory_recall", {"query": "x", "namespace": "no such"}, "invalid arguments: invalid namespace"),
        ("memory_update", {"id": 1}, "memory_update needs at least one field to change besides id"),
        ("memory_list", {"order": "oldest"}, "invalid arguments for memory_list"),
        (
            "memory_delete",
            {"id": 1},
            "unknown tool 'memory_delete'; the tools are memory_store, memory_recall",
        ),
    ],
)
async def test_bad_arguments_are_tool_errors_with_a_clear_message(
    served: Served, tool: str, arguments: dict[str, object], expected: str
) -> None:
    key = await served.key(_user())
    async with mcp_session(served.base, key) as client:
        result = await client.call_tool(tool, arguments)
    assert result.is_error
    text = text_of(result)
    assert expected in text
    assert "Traceback" not in text


async def test_unknown_ids_are_not_found_for_every_tool(served: Served) -> None:
    key = await served.key(_user())
    async with mcp_session(served.base, key) as client:
        calls: list[tuple[str, dict[str, Any]]] = [
            ("memory_get", {"id": 987654321}),
            ("memory_update", {"id": 987654321, "content": "new"}),
            ("memory_forget", {"id": 987654321}),
        ]
        for tool, arguments in calls:
            result = await client.call_tool(tool, arguments)
            assert result.is_error and text_of(result) == "not found: memory 987654321 not found", tool


@pytest.mark.parametrize("authorization", [None, "Bearer mem_not_a_real_key", "Basic abc"])
async def test_no_key_or_a_bad_key_is_401_before_any_mcp_processing(
    served: Served, authorization: str | None
) -> None:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if authorization:
        headers["Authorization"] = authorization
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    async with httpx.AsyncClient(base_url=served.base) as http:
        answer = await http.post("/mcp", json=body, headers=headers)
    assert answer.status_code == 401
    assert answer.headers["content-type"] == "application/problem+json"
    assert "jsonrpc" not in answer.text


async def test_the_official_client_fails_to_connect_without_a_key(served: Served) -> None:
    with pytest.raises(Exception) as raised:  # noqa: PT011 - the client's wrapping varies by transport step
        async with mcp_session(served.base, "mem_wrong"):
            pass
    assert "401" in repr(raised.value) or isinstance(raised.value, MCPError | ExceptionGroup)


async def test_a_read_only_key_recalls_but_cannot_write(served: Served) -> None:
    user = _user()
    writer, reader = await served.key(user), await served.key(user, "read")
    async with mcp_session(served.base, writer, namespace="notes") as client:
        stored = await client.call_tool(
            "memory_store", {"memories": [{"content": "Builds run on Buildkite."}]}
        )
        memory_id = int(text_of(stored).split("#")[1].split()[0])
    async with mcp_session(served.base, reader, namespace="notes") as client:
        recalled = await client.call_tool("memory_recall", {"query": "where do builds run?"})
        assert "Buildkite" in text_of(recalled)
        writes: list[tuple[str, dict[str, Any]]] = [
            ("memory_store", {"memories": [{"content": "x"}]}),
            ("memory_update", {"id": memory_id, "content": "y"}),
            ("memory_forget", {"id": memory_id}),
        ]
        for tool, arguments in writes:
            refused = await client.call_tool(tool, arguments)
            assert refused.is_error
            assert text_of(refused) == (
                f"this API key lacks the `write` scope {tool} needs "
                "(create one with `memoria keys create --scope write`)"
            )
    async with mcp_session(served.base, writer) as client:
        assert "Buildkite" in text_of(await client.call_tool("memory_get", {"id": memory_id}))


async def test_a_write_only_key_cannot_read(served: Served) -> None:
    key = await served.key(_user(), "write")
    async with mcp_session(served.base, key) as client:
        refused = await client.call_tool("memory_recall", {"query": "anything at all"})
    assert refused.is_error and "lacks the `read` scope memory_recall needs" in text_of(refused)


async def test_user_b_never_sees_user_a_memories(served: Served) -> None:
    a, b = await served.key(_user()), await served.key(_user())
    secret_word = f"zebra{uuid.uuid4().hex[:6]}"
    async with mcp_session(served.base, a, namespace="notes") as client:
        stored = await client.call_tool(
            "memory_store", {"memories": [{"content": f"The {secret_word} plan is on."}]}
        )
        a_id = int(text_of(stored).split("#")[1].split()[0])
    async with mcp_session(served.base, b, namespace="notes") as client:
        await client.call_tool("memory_store", {"memories": [{"content": "B keeps its own notes here."}]})
        seen = [
            await client.call_tool("memory_recall", {"query": f"{secret_word} plan"}),
            await client.call_tool("memory_recall", {"query": f"{secret_word} plan", "namespace": "notes"}),
            await client.call_tool("memory_list", {}),
            await client.call_tool("memory_list", {"order": "important"}),
            await client.call_tool("memory_get", {"id": a_id}),
            await client.call_tool("memory_update", {"id": a_id, "content": "hijacked"}),
            await client.call_tool("memory_forget", {"id": a_id}),
        ]
        assert all(secret_word not in text_of(result) for result in seen)
        assert [r.is_error for r in seen[-3:]] == [True, True, True]
    async with mcp_session(served.base, a) as client:
        assert secret_word in text_of(await client.call_tool("memory_get", {"id": a_id}))


async def test_credentials_stored_through_mcp_come_back_as_placeholders(served: Served) -> None:
    key = await served.key(_user())
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    async with mcp_session(served.base, key) as client:
        stored = await client.call_tool(
            "memory_store", {"memories": [{"content": f"CI pushes with token {token}"}]}
        )
        memory_id = int(text_of(stored).split("#")[1].split()[0])
        got = text_of(await client.call_tool("memory_get", {"id": memory_id}))
        recalled = text_of(await client.call_tool("memory_recall", {"query": "how does CI push?"}))
    assert token not in got and token not in recalled
    assert "[secret:github-token#1]" in got


async def test_a_rate_limited_key_gets_a_tool_error(served: Served, module_db: str) -> None:
    key_id, key = await served.key_row(_user())
    async with mcp_session(served.base, key) as client:
        conn = await asyncpg.connect(module_db)
        try:  # the key's bucket empty for the next hour
            await conn.execute(
                "INSERT INTO rate_limits (bucket, tokens, updated_at) "
                "VALUES ($1, -1000, now() + interval '1 hour') ON CONFLICT (bucket) "
                "DO UPDATE SET tokens = -1000, updated_at = now() + interval '1 hour'",
                f"key:{key_id}",
            )
        finally:
            await conn.close()
        refused = await client.call_tool("memory_recall", {"query": "anything"})
    assert refused.is_error
    assert text_of(refused).startswith("rate limited: this API key made more than")


async def test_long_results_are_cut_and_the_cut_is_marked(served: Served) -> None:
    key = await served.key(_user())
    long_text = "Release checklist: " + " ".join(f"step {i} verify the canary dashboards" for i in range(90))
    async with mcp_session(served.base, key, namespace="long") as client:
        stored = await client.call_tool("memory_store", {"memories": [{"content": long_text}]})
        assert not stored.is_error, text_of(stored)
        memory_id = int(text_of(stored).split("#")[1].split()[0])
        recalled = text_of(await client.call_tool("memory_recall", {"query": "release checklist canary"}))
        full = text_of(await client.call_tool("memory_get", {"id": memory_id}))
    assert f"more chars; memory_get {memory_id} for all]" in recalled
    assert len(recalled) < len(long_text)
    assert long_text in full


async def test_twenty_clients_at_once_each_see_only_their_own(served: Served) -> None:
    users = [_user() for _ in range(4)]
    keys = [await served.key(user) for user in users]

    async def one(i: int) -> tuple[int, str, str]:
        user_index = i % len(users)
        marker = f"kiwi{i:02d}x{uuid.uuid4().hex[:4]}"
        async with mcp_session(served.base, keys[user_index], namespace=f"load-{i}") as client:
            stored = await client.call_tool(
                "memory_store", {"memories": [{"content": f"Client {marker} was here."}]}
            )
            assert not stored.is_error, text_of(stored)
            recalled = await client.call_tool("memory_recall", {"query": f"{marker}"})
            return user_index, marker, text_of(recalled)

    results = await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(20))), timeout=120)
    markers = {marker: user_index for user_index, marker, _ in results}
    for user_index, marker, text in results:
        assert marker in text
        others = [m for m, owner in markers.items() if owner != user_index and m in text]
        assert others == []


@pytest.mark.parametrize(
    ("header", "value", "status"),
    [("Host", "evil.example", 421), ("Origin", "http://evil.example", 403)],
)
async def test_other_hosts_and_origins_are_refused(
    served: Served, header: str, value: str, status: int
) -> None:
    """DNS rebinding: a page on another origin, or a name that resolves to this machine, is refused."""
    key = await served.key(_user())
    headers = {
        "Authorization": f"Bearer {key}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
        header: value,
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    async with httpx.AsyncClient(base_url=served.base) as http:
        answer = await http.post("/mcp", json=body, headers=headers)
    assert answer.status_code == status
    assert "memory_store" not in answer.text


async def test_bench_mcp_times_both_paths_and_counts_what_the_server_lists(
    served: Served, tmp_path: Path
) -> None:
    sentences = tmp_path / "sentences.txt"
    sentences.write_text(
        "\n".join(f"I keep {i} spare keys in drawer number {i} at home." for i in range(400))
    )
    options = McpBenchOptions(sentences=sentences, memories=30, rounds=4, warmup_rounds=1)
    report = await measure(served.base, await served.key(_user()), options, lambda _: None)
    assert report["rest_ms"]["n"] == report["mcp_ms"]["n"] == 4
    assert report["added_p50_ms"] == round(report["mcp_ms"]["p50"] - report["rest_ms"]["p50"], 2)
    size = report["tool_definitions"]
    assert size["characters"] == len(definitions_text())  # what the agent is sent is what the table says
    assert size["tokens_estimate_chars_div_4"] == round(len(definitions_text()) / 4)
    assert size["tokens_minilm_wordpiece"] > 0
