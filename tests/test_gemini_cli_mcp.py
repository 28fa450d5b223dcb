"""Memoria's MCP tools in Gemini CLI: `memoria mcp install --agent gemini` (its settings file given back
byte for byte by uninstall), and the real Gemini CLI (from npm) calling the store tool through `/mcp`
of a real `memoria serve`, its model played by the fake Gemini API on 127.0.0.1.

With `--approve-tools` (Memoria's server trusted) a headless `gemini -p` lists Memoria's tools in its
request to the model, runs the scripted store call without asking, and the memory is stored in the
namespace the install named. Every wait is bounded.
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
from memoria_bench.clis.gemini import (
    GEMINI_TIMEOUT_S,
    gemini_argv,
    gemini_binary,
    gemini_env,
    write_user_settings,
)
from memoria_bench.clis.gemini_api import FakeGemini, FunctionCall, Reply, Text
from memoria_bench.serve import served_api
from tests.test_claude_code_mcp import MEMORIA

FACT = "The zebra-17 service is deployed with Terraform only; never kubectl apply by hand."
STORE_PROMPT = "Remember this for later sessions: zebra-17 deploys with Terraform only."
NAMESPACE = "repo:zebra-17"
KEY_HEADER = "Bearer ${MEMORIA_CLIENT__API_KEY}"


def declared(body: dict[str, Any]) -> list[str]:
    """The function names the request offers the model."""
    return [
        function.get("name", "")
        for tool in body.get("tools", [])
        for function in tool.get("functionDeclarations", [])
        if isinstance(function, dict)
    ]


def store_tool(body: dict[str, Any]) -> str | None:
    return next((name for name in declared(body) if name.endswith("memory_store")), None)


def script(body: dict[str, Any]) -> Reply:
    """For STORE_PROMPT one call of Memoria's store tool with FACT, then a short text."""
    asked = json.dumps(body.get("contents", []))
    name = store_tool(body)
    if STORE_PROMPT in asked and name and "functionResponse" not in asked:
        return FunctionCall(name, {"memories": [{"content": FACT, "category": "decision"}]})
    return Text("Stored.")


def test_mcp_install_agent_gemini_adds_memorias_server_and_uninstall_gives_the_file_back(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    settings = write_user_settings(home)
    original = settings.read_bytes()
    env = {"HOME": str(home), "MEMORIA_CLIENT__URL": "http://127.0.0.1:8080"}
    runner = CliRunner()
    installed = runner.invoke(
        main, ["mcp", "install", "--agent", "gemini", "--namespace", NAMESPACE, "--approve-tools"], env=env
    )
    assert installed.exit_code == 0, installed.output
    assert "the tools would be unreachable" in installed.output  # no key in this environment
    entry = json.loads(settings.read_text())["mcpServers"]["memoria"]
    assert entry == {
        "httpUrl": "http://127.0.0.1:8080/mcp",
        "headers": {"Authorization": KEY_HEADER, "X-Memoria-Namespace": NAMESPACE},
        "trust": True,
    }
    removed = runner.invoke(main, ["mcp", "uninstall", "--agent", "gemini"], env=env)
    assert removed.exit_code == 0, removed.output
    assert settings.read_bytes() == original


@pytest.mark.e2e
async def test_gemini_cli_calls_memorias_store_tool_and_the_memory_is_stored(tmp_path: Path) -> None:
    gemini = await asyncio.to_thread(gemini_binary)
    repo = tmp_path / "zebra-17"
    repo.mkdir()
    home = tmp_path / "home"
    write_user_settings(home)
    data_dir = tmp_path / "pgdata"
    fake = FakeGemini(script).start()
    try:
        async with served_api({"MEMORIA_DATABASE__DATA_DIR": str(data_dir)}) as api:
            server_env = {**os.environ, "MEMORIA_DATABASE__DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1"}
            created = await asyncio.to_thread(
                subprocess.run,
                [MEMORIA, "keys", "create", "--user", "gem", "--create-user"],
                env=server_env,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert created.returncode == 0, created.stderr
            key = created.stdout.strip()
            keep = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORIA_", "XDG_"))}
            client_env = keep | {
                "HOME": str(home),
                "MEMORIA_CLIENT__URL": api.base,
                "MEMORIA_CLIENT__API_KEY": key,
            }
            installed = await asyncio.to_thread(
                subprocess.run,
                [MEMORIA, "mcp", "install", "--agent", "gemini", "--namespace", NAMESPACE, "--approve-tools"],
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
                gemini_argv(gemini, STORE_PROMPT),
                cwd=repo,
                env=gemini_env(client_env, home, fake.url),
                capture_output=True,
                text=True,
                timeout=GEMINI_TIMEOUT_S,
                check=False,
            )
            shown = f"exit {run.returncode}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr[-3000:]}"
            turns = fake.generations()
            assert turns and store_tool(turns[0]), (
                f"no request offered Memoria's store tool: {declared(turns[0]) if turns else []}\n{shown}"
            )
            assert any("functionResponse" in json.dumps(turn.get("contents", [])) for turn in turns[1:]), (
                shown
            )
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
