"""Memoria's MCP tools in GitHub Copilot CLI: `memoria mcp install --agent copilot` (its mcp-config.json
given back byte for byte by uninstall), and the real Copilot CLI (from npm) calling the store tool
through `/mcp` of a real `memoria serve`, its model played by the fake OpenAI Chat Completions API
on 127.0.0.1.

Copilot CLI keeps no tool permission in a file, so the headless run is started with the flag the
install names (`--allow-tool=memoria`); it lists Memoria's tools in its request to the model, runs
the scripted store call, and the memory is stored in the namespace the install named, the key
coming from `${MEMORIA_CLIENT__API_KEY}` in the header. Every wait is bounded.
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
from app.mcp.install_copilot import ALLOW_FLAG
from memoria_bench.clis.copilot import COPILOT_TIMEOUT_S, copilot_argv, copilot_binary, copilot_env
from memoria_bench.clis.openai_chat_api import FakeOpenAIChat, ToolCall
from memoria_bench.serve import served_api
from tests.test_claude_code_mcp import MEMORIA

FACT = "The zebra-17 service is deployed with Terraform only; never kubectl apply by hand."
STORE_PROMPT = "Remember this for later sessions: zebra-17 deploys with Terraform only."
NAMESPACE = "repo:zebra-17"
KEY_HEADER = "Bearer ${MEMORIA_CLIENT__API_KEY}"
#: A person's own MCP configuration (an install must keep it, an uninstall give it back as it was).
THEIRS = (
    '{\n    "mcpServers": {\n        "docs": {"type": "http", "url": "https://docs.example/mcp"}\n    }\n}\n'
)


def declared(body: dict[str, Any]) -> list[str]:
    """The function names the request offers the model."""
    return [
        str(tool.get("function", {}).get("name", ""))
        for tool in body.get("tools", [])
        if isinstance(tool, dict)
    ]


def store_tool(body: dict[str, Any]) -> str | None:
    return next((name for name in declared(body) if name.endswith("memory_store")), None)


def script(body: dict[str, Any]) -> str | ToolCall:
    """For STORE_PROMPT one call of Memoria's store tool with FACT, then a short text."""
    messages = body.get("messages", [])
    name = store_tool(body)
    asked = json.dumps(messages)
    if STORE_PROMPT in asked and name and not any(m.get("role") == "tool" for m in messages):
        return ToolCall(name, {"memories": [{"content": FACT, "category": "decision"}]})
    return "Stored."


def test_mcp_install_agent_copilot_adds_memorias_server_and_uninstall_gives_the_file_back(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    config = home / ".copilot" / "mcp-config.json"
    config.parent.mkdir(parents=True)
    config.write_text(THEIRS)
    env = {"HOME": str(home), "MEMORIA_CLIENT__URL": "http://127.0.0.1:8080", "COPILOT_HOME": ""}
    runner = CliRunner()
    installed = runner.invoke(
        main, ["mcp", "install", "--agent", "copilot", "--namespace", NAMESPACE], env=env
    )
    assert installed.exit_code == 0, installed.output
    assert "the tools would be unreachable" in installed.output  # no key in this environment
    assert ALLOW_FLAG in installed.output
    servers = json.loads(config.read_text())["mcpServers"]
    assert servers["memoria"] == {
        "type": "http",
        "url": "http://127.0.0.1:8080/mcp",
        "headers": {"Authorization": KEY_HEADER, "X-Memoria-Namespace": NAMESPACE},
        "tools": ["*"],
    }
    assert list(servers) == ["docs", "memoria"]
    again = runner.invoke(main, ["mcp", "install", "--agent", "copilot", "--namespace", NAMESPACE], env=env)
    assert "already installed" in again.output
    removed = runner.invoke(main, ["mcp", "uninstall", "--agent", "copilot"], env=env)
    assert removed.exit_code == 0, removed.output
    assert config.read_text() == THEIRS


@pytest.mark.e2e
async def test_copilot_cli_calls_memorias_store_tool_and_the_memory_is_stored(tmp_path: Path) -> None:
    copilot = await asyncio.to_thread(copilot_binary)
    repo = tmp_path / "zebra-17"
    repo.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    data_dir = tmp_path / "pgdata"
    fake = FakeOpenAIChat(script).start()
    try:
        async with served_api({"MEMORIA_DATABASE__DATA_DIR": str(data_dir)}) as api:
            server_env = {**os.environ, "MEMORIA_DATABASE__DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1"}
            created = await asyncio.to_thread(
                subprocess.run,
                [MEMORIA, "keys", "create", "--user", "copilot", "--create-user"],
                env=server_env,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert created.returncode == 0, created.stderr
            key = created.stdout.strip()
            keep = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORIA_", "XDG_", "COPILOT_"))}
            client_env = keep | {
                "HOME": str(home),
                "MEMORIA_CLIENT__URL": api.base,
                "MEMORIA_CLIENT__API_KEY": key,
            }
            installed = await asyncio.to_thread(
                subprocess.run,
                [MEMORIA, "mcp", "install", "--agent", "copilot", "--namespace", NAMESPACE],
                cwd=repo,
                env=client_env,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert installed.returncode == 0, installed.stderr
            run = await asyncio.to_thread(
                subprocess.run,
                copilot_argv(copilot, STORE_PROMPT, ALLOW_FLAG),
                cwd=repo,
                env=copilot_env(client_env, home, copilot, fake.base_url),
                capture_output=True,
                text=True,
                timeout=COPILOT_TIMEOUT_S,
                check=False,
            )
            shown = f"exit {run.returncode}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr[-3000:]}"
            turns = fake.completions()
            assert turns and store_tool(turns[0]), (
                f"no request offered Memoria's store tool: {declared(turns[0]) if turns else []}\n{shown}"
            )
            assert any(m.get("role") == "tool" for turn in turns[1:] for m in turn.get("messages", [])), shown
            async with httpx.AsyncClient(base_url=api.base, timeout=30) as http:
                page = await http.get(
                    "/v1/memories",
                    params={"namespace": NAMESPACE},
                    headers={"Authorization": f"Bearer {key}"},
                )
            assert page.status_code == 200, page.text
            assert [item["content"] for item in page.json()["items"]] == [FACT], shown
            assert run.returncode == 0, shown
    finally:
        fake.stop()
