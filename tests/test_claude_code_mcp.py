"""The real Claude Code (from npm) against a real `memoria serve` through `/mcp`, its model played by
a fake Anthropic Messages API on 127.0.0.1.

1. `memoria mcp install --scope project --allow-tools` in a git repository; `claude -p` offers
   Memoria's tools to the model. Today's Claude Code defers MCP tools behind `ToolSearch` (the
   first request lists their names only): the fake model searches with the words a model would
   use ("memory", "remember", "recall", "what did we decide") and each search must find the tool
   that word is for; a client that lists the tools outright is served as well.
2. The fake model answers with a `tool_use` of the store tool; Claude Code calls it through MCP
   (allowed by the install's permission entry, no `--allowedTools`) and sends the `tool_result`
   back; the memory is in the project's namespace.
3. With the UserPromptSubmit hook installed (`memoria hook install`, the project's namespace named),
   the next `claude -p` run's request to the model carries the stored memory.
4. A fact that changes in a later session: session 1 stores it through `memory_store`; session 2's
   model recalls it (`memory_recall`), reads its id from the tool result and stores the new version
   with `supersedes: [id]`; session 3's request (SessionStart and prompt hook context) carries the
   new version and nowhere the old one. This one installs with `--scope local` and the key in the
   key file only (as after `memoria login`, no `MEMORIA_CLIENT__API_KEY`): every tool call is
   authenticated by the entry's `headersHelper`.

Claude Code is found at `$CLAUDE_CODE_BIN` (`.ci/claude-code-mcp.sh` sets it), else installed by
`.ci/claude-code-mcp.sh --install-only` (npm, into a local folder). Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from memoria_bench.clis.anthropic_api import FakeAnthropic, Reply, Text, ToolUse
from memoria_bench.clis.claude import CLAUDE_TIMEOUT_S, claude_binary, claude_env
from memoria_bench.serve import ServedApi, served_api
from memoria_hook_client.environment import ENV_API_KEY, write_key_file

pytestmark = pytest.mark.e2e

MEMORIA = str(Path(sys.executable).with_name("memoria"))
STORE_TOOL = "mcp__memoria__memory_store"
TOOLS = [f"mcp__memoria__{name}" for name in ("memory_store", "memory_recall", "memory_get", "memory_list")]
FACT = "The zebra-17 service is deployed with Terraform only; never kubectl apply by hand."
STORE_PROMPT = "Remember this for later sessions: zebra-17 deploys with Terraform only."
RECALL_PROMPT = "How should I deploy the zebra-17 service to production?"
RECALL_TOOL = "mcp__memoria__memory_recall"
OLD_FACT = "Background jobs of okapi-3 run on Celery with RabbitMQ as the broker."
NEW_FACT = "Background jobs of okapi-3 moved to Dramatiq on Redis streams; Celery and RabbitMQ are gone."
# the prompts name the subject, never the facts: what reaches session 3 comes from the memories
SAVE_PROMPT = "Save our decision about how okapi-3 runs its background jobs as a memory."
CHANGE_PROMPT = "We changed how okapi-3 runs its background jobs; update the memory to the new setup."
ASK_PROMPT = "How do background jobs of okapi-3 run? Which broker do they use?"


TOOL_SEARCH = "ToolSearch"
SEARCHES = {
    "toolu_search_memory": ("memory", {STORE_TOOL, RECALL_TOOL}),
    "toolu_search_remember": ("remember", {STORE_TOOL}),
    "toolu_search_recall": ("recall", {RECALL_TOOL}),
    "toolu_search_decide": ("what did we decide", {RECALL_TOOL}),
}
"""The searches a model makes for its memory when the tools are deferred: each call's id, its
query, and the tools its results must hold (Claude Code answers the best five)."""


def _search_first(body: dict[str, Any], searches: dict[str, str]) -> Reply | None:
    """The next of `searches` (tool_use id -> query) not yet made, when the client defers its MCP
    tools behind ToolSearch; None when all are made or the tools are offered outright."""
    names = _tool_names(body)
    asked = json.dumps(body.get("messages", []))
    searched = any(call_id in asked for call_id in searches)
    if TOOL_SEARCH not in names or (not searched and any(n.startswith("mcp__memoria__") for n in names)):
        return None
    for call_id, query in searches.items():
        if call_id not in asked:
            return ToolUse(TOOL_SEARCH, {"query": query}, id=call_id)
    return None


@dataclass
class ModelScript:
    """The fake model: for the store prompt, the searches of `SEARCHES` when the tools are deferred,
    then one `tool_use` of the store tool; text otherwise."""

    tool_used: bool = False

    def __call__(self, body: dict[str, Any]) -> Reply:
        asked = json.dumps(body.get("messages", []))
        if STORE_PROMPT not in asked or self.tool_used:
            return Text("Done.")
        searching = _search_first(body, {call_id: query for call_id, (query, _) in SEARCHES.items()})
        if searching is not None:
            return searching
        if STORE_TOOL in _tool_names(body):
            self.tool_used = True
            return ToolUse(STORE_TOOL, {"memories": [{"content": FACT, "category": "decision"}]})
        return Text("I have no tool to store memories with.")


@pytest.fixture
def fake_model() -> Iterator[FakeAnthropic]:
    fake = FakeAnthropic(ModelScript()).start()
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
async def memoria_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[tuple[ServedApi, dict[str, str]]]:
    """One `memoria serve` (embedded PostgreSQL) for this file's tests and the environment that
    reaches its data directory: each test brings its own repository, namespace and user, so none
    needs a server of its own, and a server start is most of what a test here costs besides Claude."""
    server_env = {"MEMORIA_DATABASE__DATA_DIR": str(tmp_path_factory.mktemp("claude-mcp") / "pgdata")}
    async with served_api(server_env) as api:
        yield api, server_env


async def _run(
    argv: list[str], cwd: Path, env: dict[str, str], limit_s: float
) -> subprocess.CompletedProcess[str]:
    """Run a command in a worker thread, so the server's output keeps being read meanwhile."""
    return await asyncio.to_thread(
        subprocess.run, argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=limit_s, check=False
    )


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [str(tool.get("name")) for tool in body.get("tools", []) if isinstance(tool, dict)]


def _found_by_search(bodies: list[dict[str, Any]]) -> dict[str, set[str]]:
    """The tools each ToolSearch call loaded (its `tool_reference` results), by the call's id."""
    return {
        str(result.get("tool_use_id")): {
            str(ref.get("tool_name")) for ref in result["content"] if ref.get("type") == "tool_reference"
        }
        for body in bodies
        for result in _tool_results(body)
        if isinstance(result.get("content"), list)
        and any(isinstance(ref, dict) and ref.get("type") == "tool_reference" for ref in result["content"])
    }


def _tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        block
        for message in body.get("messages", [])
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


async def _project_with_mcp(
    repo: Path, home: Path, server_env: dict[str, str], base: str, scope: str = "project"
) -> tuple[str, dict[str, str]]:
    """A key for a new user, `memoria mcp install --scope <scope> --allow-tools` in `repo`; the key
    and the client's environment (its own HOME). Project scope: the key in the environment, the
    server approved (as `-p` cannot ask). Local scope: the key in the key file only, as after
    `memoria login`, read by the entry's headersHelper."""
    admin_env = {**os.environ, **server_env, "HF_HUB_OFFLINE": "1"}
    user = repo.name  # each test's own: its memories, sessions and namespaces are apart on the shared server
    created = await _run([MEMORIA, "keys", "create", "--user", user, "--create-user"], repo, admin_env, 120)
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip()

    client_env = {
        k: v for k, v in os.environ.items() if not k.startswith(("MEMORIA_", "ANTHROPIC_", "CLAUDE"))
    } | {"HOME": str(home), "MEMORIA_CLIENT__URL": base}
    if scope == "project":
        client_env[ENV_API_KEY] = key
    else:
        write_key_file(home / ".config" / "memoria" / "key", key)
        # as after a first interactive start here: Claude Code runs a local install's headersHelper
        # only in a workspace whose trust dialog was accepted
        resolved = await asyncio.to_thread(repo.resolve)
        trusted = {"projects": {str(resolved): {"hasTrustDialogAccepted": True}}}
        (home / ".claude.json").write_text(json.dumps(trusted))
    installed = await _run(
        [MEMORIA, "mcp", "install", "--scope", scope, "--allow-tools"], repo, client_env, 120
    )
    assert installed.returncode == 0, installed.stderr
    assert "Warning" not in installed.stderr, installed.stderr
    config = repo / ".mcp.json" if scope == "project" else home / ".claude.json"
    assert key not in config.read_text()
    if scope == "project":
        mcp_json = json.loads(config.read_text())
        assert mcp_json["mcpServers"]["memoria"]["headers"]["X-Memoria-Namespace"] == f"repo:{repo.name}"
        # Claude Code asks before it uses a server from .mcp.json; -p cannot ask, so approve it here
        local = repo / ".claude" / "settings.local.json"
        local.write_text(json.dumps(json.loads(local.read_text()) | {"enabledMcpjsonServers": ["memoria"]}))
    return key, client_env


def _claude_env(client_env: dict[str, str], fake: FakeAnthropic) -> dict[str, str]:
    return claude_env(client_env, Path(client_env["HOME"]), fake.url)


async def test_claude_code_stores_through_mcp_and_the_hook_recalls_it(
    tmp_path: Path, fake_model: FakeAnthropic, memoria_server: tuple[ServedApi, dict[str, str]]
) -> None:
    claude = await asyncio.to_thread(claude_binary)
    repo = tmp_path / "zebra-17"
    repo.mkdir()
    await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(repo)], check=True, timeout=30)
    namespace = "repo:zebra-17"
    home = tmp_path / "home"
    home.mkdir()
    api, server_env = memoria_server
    key, client_env = await _project_with_mcp(repo, home, server_env, api.base)
    claude_env = _claude_env(client_env, fake_model)
    first = await _run([claude, "-p", STORE_PROMPT, "--debug"], repo, claude_env, CLAUDE_TIMEOUT_S)
    transcript = f"exit {first.returncode}\nstdout:\n{first.stdout[-3000:]}\nstderr:\n{first.stderr[-6000:]}"
    asked = fake_model.messages()
    found = _found_by_search(asked)
    if found:  # the tools were deferred: each word found the tool it is for
        for call_id, (query, wanted) in SEARCHES.items():
            assert wanted <= found.get(call_id, set()), f"searching {query!r} found {found.get(call_id)}"
    else:  # a client that lists MCP tools outright
        with_tools = [body for body in asked if STORE_TOOL in _tool_names(body)]
        assert with_tools, f"no request listed Memoria's tools; {len(asked)} requests\n{transcript}"
        assert set(TOOLS) <= set(_tool_names(with_tools[0]))
    results = [block for body in asked for block in _tool_results(body)]
    assert results, f"no tool_result came back to the model\n{transcript}"
    assert "Stored 1: #" in json.dumps(results), json.dumps(results)[:2000]
    assert first.returncode == 0, transcript

    async with httpx.AsyncClient(base_url=api.base, timeout=30) as http:
        page = await http.get(
            "/v1/memories", params={"namespace": namespace}, headers={"Authorization": f"Bearer {key}"}
        )
    assert page.status_code == 200, page.text
    assert [item["content"] for item in page.json()["items"]] == [FACT]

    hooked = await _run(
        [MEMORIA, "hook", "install", "--scope", "project", "--mode", "http", "--namespace", namespace],
        repo,
        client_env,
        120,
    )
    assert hooked.returncode == 0, hooked.stderr
    before = len(fake_model.messages())
    second = await _run([claude, "-p", RECALL_PROMPT], repo, claude_env, CLAUDE_TIMEOUT_S)
    transcript = (
        f"exit {second.returncode}\nstdout:\n{second.stdout[-3000:]}\nstderr:\n{second.stderr[-3000:]}"
    )
    asked_then = [json.dumps(body) for body in fake_model.messages()[before:]]
    prompted = [text for text in asked_then if RECALL_PROMPT in text]
    assert prompted, f"the second run never asked the model\n{transcript}"
    assert any(FACT in text for text in prompted), f"the hook did not inject the memory\n{transcript}"
    assert second.returncode == 0, transcript


def _load(body: dict[str, Any], tool: str, query: str, call_id: str) -> Reply | None:
    """A ToolSearch for `query` when `tool` is deferred (not offered yet, ToolSearch offered), once;
    None when the tool can be called."""
    names = _tool_names(body)
    if tool in names or TOOL_SEARCH not in names or call_id in json.dumps(body.get("messages", [])):
        return None
    return ToolUse(TOOL_SEARCH, {"query": query}, id=call_id)


@dataclass
class ChangingFactScript:
    """The fake model of the changed-fact sessions: session 1 stores OLD_FACT; session 2 recalls it,
    takes its id from the recall's tool result and stores NEW_FACT superseding it; text otherwise."""

    old_id: int | None = None

    def __call__(self, body: dict[str, Any]) -> Reply:
        asked = json.dumps(body.get("messages", []))
        results = json.dumps(_tool_results(body))
        # the latest session's prompt first: a session's context quotes the earlier sessions' prompts
        if ASK_PROMPT in asked:
            return Text("Done.")
        if CHANGE_PROMPT in asked:
            if "toolu_find" not in asked:
                loading = _load(body, RECALL_TOOL, "recall", "toolu_load_recall")
                return loading or ToolUse(
                    RECALL_TOOL, {"query": "okapi-3 background jobs broker"}, id="toolu_find"
                )
            if "toolu_replace" not in asked:
                loading = _load(body, STORE_TOOL, "remember", "toolu_load_store")
                if loading is not None:
                    return loading
                # the hit whose text is the old fact: "#<id> [decision] score …" then its text
                found = re.search(r"#(\d+) [^#]*?" + re.escape("Celery with RabbitMQ"), results)
                if found is None:
                    return Text("I could not find the old memory.")
                self.old_id = int(found.group(1))
                # the id as the recall shows it, `#` and all: the server reads it as the id
                item = {"content": NEW_FACT, "category": "decision", "supersedes": [f"#{self.old_id}"]}
                return ToolUse(STORE_TOOL, {"memories": [item]}, id="toolu_replace")
        elif SAVE_PROMPT in asked and "toolu_save" not in asked:
            return _load(body, STORE_TOOL, "remember", "toolu_load_save") or ToolUse(
                STORE_TOOL, {"memories": [{"content": OLD_FACT, "category": "decision"}]}, id="toolu_save"
            )
        return Text("Done.")


def _hook_contexts(body: dict[str, Any]) -> str:
    """Everything the hooks added to a request, as Claude Code words it ("<Event> hook additional
    context: …")."""
    texts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)

    walk(body.get("messages", []))
    return "\n".join(text for text in texts if "hook additional context:" in text)


async def test_a_fact_changed_in_a_later_session_reaches_the_next_one_in_its_new_version_only(
    tmp_path: Path, memoria_server: tuple[ServedApi, dict[str, str]]
) -> None:
    script = ChangingFactScript()
    fake = FakeAnthropic(script).start()
    try:
        claude = await asyncio.to_thread(claude_binary)
        repo = tmp_path / "okapi-3"
        repo.mkdir()
        await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(repo)], check=True, timeout=30)
        namespace = "repo:okapi-3"
        home = tmp_path / "home"
        home.mkdir()
        api, server_env = memoria_server
        key, client_env = await _project_with_mcp(repo, home, server_env, api.base, scope="local")
        hooked = await _run(
            [MEMORIA, "hook", "install", "--scope", "project", "--namespace", namespace],
            repo,
            client_env,
            120,
        )
        assert hooked.returncode == 0, hooked.stderr
        claude_env = _claude_env(client_env, fake) | {"MEMORIA_CLIENT__CAPTURE_FLUSH": "inline"}

        async def session(prompt: str) -> list[dict[str, Any]]:
            before = len(fake.messages())
            done = await _run([claude, "-p", prompt], repo, claude_env, CLAUDE_TIMEOUT_S)
            shown = f"exit {done.returncode}\nstdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
            asked = [body for body in fake.messages()[before:] if prompt in json.dumps(body)]
            assert asked, f"the session never asked the model\n{shown}"
            assert done.returncode == 0, shown
            return asked

        await session(SAVE_PROMPT)
        changed = await session(CHANGE_PROMPT)
        assert script.old_id is not None, json.dumps([_tool_results(body) for body in changed])[:3000]
        replaced = json.dumps([_tool_results(body) for body in changed])
        assert f"supersedes #{script.old_id}" in replaced, replaced[:3000]
        async with httpx.AsyncClient(base_url=api.base, timeout=30) as http:
            superseded = await http.get(
                f"/v1/memories/{script.old_id}", headers={"Authorization": f"Bearer {key}"}
            )
        assert superseded.json()["superseded_by"] is not None, superseded.text

        asked = await session(ASK_PROMPT)
        context = _hook_contexts(asked[0])
        assert NEW_FACT in context, f"the new version did not reach the model: {context[:3000]!r}"
        everything = json.dumps(asked)
        at = everything.find("Celery with RabbitMQ")
        assert at < 0, f"the old version reached the model: …{everything[max(at - 1500, 0) : at + 300]}"
    finally:
        fake.stop()
