"""Memoria's MCP tools in Qwen Code: `memoria mcp install --agent qwen` writes Gemini CLI's entry
shape (`httpUrl`, the key as `${MEMORIA_CLIENT__API_KEY}`, opt-in `trust`) into the person's
`~/.qwen/settings.json`, and uninstall gives the file back byte for byte; the real `qwen -p` calls
Memoria's store tool and the memory is stored.

Qwen Code 0.24.4 defers MCP tools: the model's request lists only `tool_search` and `tool_call`
(a reminder names `mcp__memoria__memory_store` and the others), so the scripted model reviews the
store tool's schema with `tool_search`, calls it through `tool_call`, then answers in text.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from app.cli import main
from memoria_bench.clis.openai_chat_api import FakeOpenAIChat, ToolCall
from memoria_bench.clis.qwen import QWEN_TIMEOUT_S, qwen_argv, qwen_binary, qwen_env, write_user_settings
from memoria_bench.serve import served_api
from tests.test_claude_code_mcp import MEMORIA

NAMESPACE = "repo:zebra-17"
KEY_HEADER = "Bearer ${MEMORIA_CLIENT__API_KEY}"
STORE_TOOL = "mcp__memoria__memory_store"
FACT = "The zebra-17 service keeps its feature flags in flags.yaml, never in the environment."
STORE_PROMPT = "Remember for later: zebra-17 keeps its feature flags in flags.yaml."


def store_through_the_bridge(body: dict[str, Any]) -> str | ToolCall:
    """The main turn: `tool_search` for the store tool, then `tool_call` of it, then text; any other
    request (Qwen Code's own memory extractor) gets text."""
    tools = {tool.get("function", {}).get("name") for tool in body.get("tools", [])}
    if "tool_call" not in tools:
        return "Stored."
    called = [
        call["function"]["name"]
        for message in body.get("messages", [])
        for call in message.get("tool_calls") or []
    ]
    if "tool_search" not in called:
        return ToolCall("tool_search", {"query": f"select:{STORE_TOOL}"})
    if "tool_call" not in called:
        return ToolCall("tool_call", {"name": STORE_TOOL, "arguments": {"memories": [{"content": FACT}]}})
    return "Stored."


def test_mcp_install_agent_qwen_adds_memorias_server_and_uninstall_gives_the_file_back(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    settings = write_user_settings(home)
    original = settings.read_bytes()
    env = {"HOME": str(home), "MEMORIA_CLIENT__URL": "http://127.0.0.1:8080", "MEMORIA_CLIENT__API_KEY": ""}
    runner = CliRunner()
    installed = runner.invoke(
        main, ["mcp", "install", "--agent", "qwen", "--namespace", NAMESPACE, "--approve-tools"], env=env
    )
    assert installed.exit_code == 0, installed.output
    assert f"installed: MCP server memoria in {settings}" in installed.output
    assert "the tools would be unreachable" in installed.output  # no key in this environment
    written = json.loads(settings.read_text())
    assert written["mcpServers"]["memoria"] == {
        "httpUrl": "http://127.0.0.1:8080/mcp",
        "headers": {"Authorization": KEY_HEADER, "X-Memoria-Namespace": NAMESPACE},
        "trust": True,
    }
    assert {k: v for k, v in written.items() if k != "mcpServers"} == json.loads(original)
    again = runner.invoke(
        main, ["mcp", "install", "--agent", "qwen", "--namespace", NAMESPACE, "--approve-tools"], env=env
    )
    assert "already installed" in again.output

    removed = runner.invoke(main, ["mcp", "uninstall", "--agent", "qwen"], env=env)
    assert removed.exit_code == 0, removed.output
    assert settings.read_bytes() == original


def test_without_approve_tools_qwen_codes_entry_is_not_trusted_and_the_person_is_told(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"HOME": str(home), "MEMORIA_CLIENT__URL": "http://127.0.0.1:8080"}
    installed = CliRunner().invoke(main, ["mcp", "install", "--agent", "qwen"], env=env)
    assert installed.exit_code == 0, installed.output
    entry = json.loads((home / ".qwen" / "settings.json").read_text())["mcpServers"]["memoria"]
    assert "trust" not in entry
    assert "--approve-tools" in installed.output and "qwen -p" in installed.output
    assert CliRunner().invoke(main, ["mcp", "uninstall", "--agent", "qwen"], env=env).exit_code == 0
    assert not (home / ".qwen" / "settings.json").exists()


@pytest.mark.e2e
async def test_qwen_code_calls_memorias_store_tool_and_the_memory_is_stored(tmp_path: Path) -> None:
    qwen = await asyncio.to_thread(qwen_binary)
    repo = tmp_path / "zebra-17"
    repo.mkdir()
    home = tmp_path / "home"
    write_user_settings(home)
    data_dir = tmp_path / "pgdata"
    fake = FakeOpenAIChat(store_through_the_bridge).start()

    async def run(argv: list[str], env: dict[str, str], limit_s: float) -> subprocess.CompletedProcess[str]:
        return await asyncio.to_thread(
            subprocess.run,
            argv,
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=limit_s,
            check=False,
        )

    try:
        async with served_api({"MEMORIA_DATABASE__DATA_DIR": str(data_dir)}) as api:
            server_env = {**os.environ, "MEMORIA_DATABASE__DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1"}
            created = await run([MEMORIA, "keys", "create", "--user", "qw", "--create-user"], server_env, 120)
            assert created.returncode == 0, created.stderr
            key = created.stdout.strip()
            keep = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORIA_", "XDG_"))}
            client_env = keep | {
                "HOME": str(home),
                "MEMORIA_CLIENT__URL": api.base,
                "MEMORIA_CLIENT__API_KEY": key,
            }
            installed = await run(
                [MEMORIA, "mcp", "install", "--agent", "qwen", "--namespace", NAMESPACE, "--approve-tools"],
                client_env,
                120,
            )
            assert installed.returncode == 0, installed.stderr
            done = await run(
                qwen_argv(qwen, STORE_PROMPT), qwen_env(client_env, home, fake.base_url), QWEN_TIMEOUT_S
            )
            shown = f"exit {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr[-3000:]}"
            async with httpx.AsyncClient(base_url=api.base, timeout=30) as http:
                page = await http.get(
                    "/v1/memories",
                    params={"namespace": NAMESPACE},
                    headers={"Authorization": f"Bearer {key}"},
                )
            asked = [json.dumps(body.get("messages", [])[-2:])[-700:] for body in fake.completions()]
            assert page.status_code == 200, f"{page.text}\n{shown}\nthe model was asked:\n" + "\n".join(asked)
            assert [item["content"] for item in page.json()["items"]] == [FACT], shown
            assert (done.returncode, done.stdout.strip()) == (0, "Stored."), shown
    finally:
        fake.stop()
