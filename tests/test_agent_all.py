"""`memoria hook install --agent all` and `memoria mcp install --agent all` (and their uninstalls):
every agent whose command is on PATH, one line per agent (done, or skipped: not found), and a
non-zero exit only when an agent that was found could not be changed, after all were tried. PATH
holds stub executables only."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from app.cli import main

URL = "http://127.0.0.1:8080"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


def _path_with(tmp_path: Path, *commands: str) -> str:
    """A PATH of one folder holding an executable stub for each of `commands`."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for command in commands:
        stub = folder / command
        stub.write_text("#!/bin/sh\nexit 0\n")
        stub.chmod(stub.stat().st_mode | stat.S_IXUSR)
    return str(folder)


def _memoria(home: Path, path: str, *args: str) -> Result:
    env = {"HOME": str(home), "PATH": path, "MEMORIA_CLIENT__URL": URL, "MEMORIA_CLIENT__API_KEY": ""}
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def test_hook_install_all_installs_for_the_agents_on_path_and_says_which_it_skipped(
    tmp_path: Path, home: Path
) -> None:
    path = _path_with(tmp_path, "gemini", "qwen")
    installed = _memoria(home, path, "hook", "install", "--agent", "all")
    assert installed.exit_code == 0, installed.output
    lines = installed.output.splitlines()
    assert "Claude Code: skipped: not found (claude not on PATH)" in lines
    assert "Codex CLI: skipped: not found (codex not on PATH)" in lines
    assert f"Gemini CLI: installed in {home / '.gemini' / 'settings.json'}" in lines
    assert f"Qwen Code: installed in {home / '.qwen' / 'settings.json'}" in lines
    assert not (home / ".codex").exists() and not (home / ".claude").exists()

    removed = _memoria(home, path, "hook", "uninstall", "--agent", "all")
    assert removed.exit_code == 0, removed.output
    assert not (home / ".gemini").exists() and not (home / ".qwen").exists()


def test_hook_install_all_tries_every_agent_and_fails_when_one_found_failed(
    tmp_path: Path, home: Path
) -> None:
    path = _path_with(tmp_path, "gemini", "qwen")
    broken = home / ".gemini" / "settings.json"
    broken.parent.mkdir()
    broken.write_text("{ not json")
    installed = _memoria(home, path, "hook", "install", "--agent", "all")
    assert installed.exit_code != 0
    assert "Gemini CLI: failed:" in installed.output
    assert f"Qwen Code: installed in {home / '.qwen' / 'settings.json'}" in installed.output
    assert broken.read_text() == "{ not json"


def test_hook_install_all_with_no_agent_on_path_fails(tmp_path: Path, home: Path) -> None:
    installed = _memoria(home, _path_with(tmp_path), "hook", "install", "--agent", "all")
    assert installed.exit_code != 0 and "no coding agent found on PATH" in installed.output


def test_mcp_install_all_adds_the_server_for_the_agents_on_path_and_uninstall_removes_it(
    tmp_path: Path, home: Path
) -> None:
    path = _path_with(tmp_path, "gemini", "qwen")
    installed = _memoria(home, path, "mcp", "install", "--agent", "all", "--approve-tools")
    assert installed.exit_code == 0, installed.output
    lines = installed.output.splitlines()
    assert "Claude Code: skipped: not found (claude not on PATH)" in lines
    assert "Codex: skipped: not found (codex not on PATH)" in lines
    for label, folder in (("Gemini CLI", ".gemini"), ("Qwen Code", ".qwen")):
        settings = home / folder / "settings.json"
        assert f"{label}: installed: MCP server memoria in {settings}" in lines
        assert json.loads(settings.read_text())["mcpServers"]["memoria"]["httpUrl"] == f"{URL}/mcp"
    assert not (home / ".claude.json").exists() and not (home / ".codex").exists()

    removed = _memoria(home, path, "mcp", "uninstall", "--agent", "all")
    assert removed.exit_code == 0, removed.output
    assert (
        f"Qwen Code: removed the MCP server memoria from {home / '.qwen' / 'settings.json'}" in removed.output
    )
    # a settings file left holding `{}` goes (its folder, where Qwen Code keeps more, stays)
    assert not (home / ".gemini" / "settings.json").exists()
    assert not (home / ".qwen" / "settings.json").exists()


def test_mcp_install_all_tries_every_agent_and_fails_when_one_found_failed(
    tmp_path: Path, home: Path
) -> None:
    path = _path_with(tmp_path, "gemini", "qwen")
    broken = home / ".qwen" / "settings.json"
    broken.parent.mkdir()
    broken.write_text("[]")
    installed = _memoria(home, path, "mcp", "install", "--agent", "all")
    assert installed.exit_code != 0
    assert "Qwen Code: failed:" in installed.output
    assert (
        f"Gemini CLI: installed: MCP server memoria in {home / '.gemini' / 'settings.json'}"
        in installed.output
    )
    assert broken.read_text() == "[]"
