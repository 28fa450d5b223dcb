"""Memoria's MCP tools in OpenCode: `memoria mcp install --agent opencode` (its opencode.json given back
byte for byte by uninstall), and the real OpenCode (from npm) calling the store tool through `/mcp`
of a real `memoria serve`, its model played by the fake OpenAI Chat Completions API on 127.0.0.1.

The person's config asks before every tool (`"permission": {"*": "ask"}`), which a headless
`opencode run` answers by refusing (1.18.33 prints "permission requested: memoria_memory_store (*);
auto-rejecting"); with `--approve-tools` (Memoria's allow rule) it lists Memoria's tools in its
request to the model (as `memoria_<tool>`), runs the scripted store call, and the memory is stored
in the namespace the install named; the key reaches the server through
`{env:MEMORIA_CLIENT__API_KEY}` in the header. Every wait is bounded.
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
from memoria_bench.clis.opencode import (
    OPENCODE_TIMEOUT_S,
    config_file,
    opencode_argv,
    opencode_binary,
    opencode_env,
    settle_config_folder,
    write_user_config,
)
from memoria_bench.serve import served_api
from tests.fakes.openai_chat_tools import FakeOpenAIChatTools, ToolCall, offered_tools, tool_results
from tests.test_claude_code_mcp import MEMORIA

FACT = "The zebra-17 service is deployed with Terraform only; never kubectl apply by hand."
STORE_PROMPT = "Remember this for later sessions: zebra-17 deploys with Terraform only."
NAMESPACE = "repo:zebra-17"
STORE_TOOL = "memoria_memory_store"


def script(body: dict[str, Any]) -> str | ToolCall:
    """For STORE_PROMPT one call of Memoria's store tool with FACT, then a short text."""
    asked = json.dumps(body.get("messages", []))
    if STORE_PROMPT in asked and STORE_TOOL in offered_tools(body) and not tool_results(body):
        return ToolCall(STORE_TOOL, {"memories": [{"content": FACT, "category": "decision"}]})
    return "Stored."


def test_mcp_install_agent_opencode_keeps_the_persons_config_and_uninstall_gives_it_back(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    path = write_user_config(home, "http://127.0.0.1:9/v1")
    data = json.loads(path.read_text())
    data["permission"] = {"*": "ask", "bash": "deny"}
    path.write_text(json.dumps(data, indent=4))  # their own indentation, no final newline
    original = path.read_bytes()
    env = {"HOME": str(home), "MEMORIA_CLIENT__URL": "http://127.0.0.1:8080"}
    runner = CliRunner()
    args = ["mcp", "install", "--agent", "opencode", "--namespace", NAMESPACE, "--approve-tools"]
    installed = runner.invoke(main, args, env=env)
    assert installed.exit_code == 0, installed.output
    assert "the tools would be unreachable" in installed.output  # no key in this environment
    config = json.loads(path.read_text())
    assert config["mcp"]["memoria"] == {
        "type": "remote",
        "url": "http://127.0.0.1:8080/mcp",
        "headers": {
            "Authorization": "Bearer {env:MEMORIA_CLIENT__API_KEY}",
            "X-Memoria-Namespace": NAMESPACE,
        },
        "oauth": False,
    }
    # the last matching rule decides in OpenCode: Memoria's allow comes after the person's "*": "ask"
    assert list(config["permission"].items()) == [("*", "ask"), ("bash", "deny"), ("memoria_*", "allow")]
    assert {k: v for k, v in config.items() if k not in ("mcp", "permission")} == {
        k: v for k, v in data.items() if k != "permission"
    }
    again = runner.invoke(main, args, env=env)
    assert again.exit_code == 0 and "already installed" in again.output, again.output
    removed = runner.invoke(main, ["mcp", "uninstall", "--agent", "opencode"], env=env)
    assert removed.exit_code == 0, removed.output
    assert path.read_bytes() == original


def test_mcp_install_agent_opencode_refuses_a_one_word_permission_and_leaves_the_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = write_user_config(home, "http://127.0.0.1:9/v1")
    path.write_text(json.dumps({**json.loads(path.read_text()), "permission": "ask"}))
    original = path.read_bytes()
    env = {"HOME": str(home), "MEMORIA_CLIENT__URL": "http://127.0.0.1:8080"}
    refused = CliRunner().invoke(main, ["mcp", "install", "--agent", "opencode", "--approve-tools"], env=env)
    assert refused.exit_code != 0 and "memoria_*" in refused.output, refused.output
    assert path.read_bytes() == original


@pytest.mark.e2e
async def test_opencode_calls_memorias_store_tool_and_the_memory_is_stored(tmp_path: Path) -> None:
    opencode = await asyncio.to_thread(opencode_binary)
    repo = tmp_path / "zebra-17"
    repo.mkdir()
    home = tmp_path / "home"
    data_dir = tmp_path / "pgdata"
    fake = FakeOpenAIChatTools(lambda body: "Stored.", tool_script=script).start()
    config = write_user_config(home, fake.base_url)
    settle_config_folder(home, opencode)  # as after OpenCode's first start online
    # the person asks before every tool: only Memoria's allow rule (--approve-tools) lets a headless
    # run call the store tool
    config.write_text(json.dumps({**json.loads(config.read_text()), "permission": {"*": "ask"}}, indent=2))
    try:
        async with served_api({"MEMORIA_DATABASE__DATA_DIR": str(data_dir)}) as api:
            server_env = {**os.environ, "MEMORIA_DATABASE__DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1"}
            created = await asyncio.to_thread(
                subprocess.run,
                [MEMORIA, "keys", "create", "--user", "oc", "--create-user"],
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
                [
                    MEMORIA,
                    "mcp",
                    "install",
                    "--agent",
                    "opencode",
                    "--namespace",
                    NAMESPACE,
                    "--approve-tools",
                ],
                cwd=repo,
                env=client_env,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert installed.returncode == 0, installed.stderr
            assert "mcp" in json.loads(config_file(home).read_text())
            run = await asyncio.to_thread(
                subprocess.run,
                opencode_argv(opencode, STORE_PROMPT),
                cwd=repo,
                # PWD names the project, as a shell there would: OpenCode takes its folder from it
                env=opencode_env(client_env, home) | {"PWD": str(repo)},
                capture_output=True,
                text=True,
                timeout=OPENCODE_TIMEOUT_S,
                check=False,
            )
            shown = f"exit {run.returncode}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr[-3000:]}"
            turns = [body for body in fake.completions() if body.get("tools")]
            offered = offered_tools(turns[0]) if turns else []
            assert STORE_TOOL in offered, f"no request offered Memoria's store tool: {offered}\n{shown}"
            assert any(tool_results(turn) for turn in turns[1:]), shown
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
