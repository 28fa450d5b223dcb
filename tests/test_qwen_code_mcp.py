"""Memoria's MCP tools in Qwen Code: `memoria mcp install --agent qwen` writes Gemini CLI's entry
shape (`httpUrl`, the key as `${MEMORIA_CLIENT__API_KEY}`, opt-in `trust`) into the person's
`~/.qwen/settings.json`, and uninstall gives the file back byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from app.cli import main
from tests.qwen_code import write_user_settings

NAMESPACE = "repo:zebra-17"
KEY_HEADER = "Bearer ${MEMORIA_CLIENT__API_KEY}"


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
