"""`memoria mcp install|uninstall`: Claude Code's documented MCP configuration, written surgically."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli import main

KEY_HEADER = "Bearer ${MEMORIA_CLIENT__API_KEY}"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in list(os.environ):
        if name.startswith("MEMORIA_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("MEMORIA_CLIENT__API_KEY", "mem_this_must_never_be_written")
    return home


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "shop-api"
    (root / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _run(*args: str) -> str:
    result = CliRunner().invoke(main, ["mcp", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_project_install_writes_mcp_json_with_the_project_namespace_and_no_key(
    home: Path, repo: Path
) -> None:
    output = _run(
        "install", "--scope", "project", "--project-dir", str(repo), "--url", "http://127.0.0.1:9000/"
    )
    config = json.loads((repo / ".mcp.json").read_text())
    assert config == {
        "mcpServers": {
            "memoria": {
                "type": "http",
                "url": "http://127.0.0.1:9000/mcp",
                "headers": {"Authorization": KEY_HEADER, "X-Memoria-Namespace": "repo:shop-api"},
            }
        }
    }
    assert "mem_this_must_never_be_written" not in (repo / ".mcp.json").read_text()
    assert "## Memory (Memoria)" in output and "memory_recall" in output and "memory_store" in output


def test_a_session_in_a_subdirectory_gets_the_git_root_namespace(
    home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo / "src")
    _run("install", "--scope", "project", "--project-dir", str(repo / "src"))
    config = json.loads((repo / "src" / ".mcp.json").read_text())
    assert config["mcpServers"]["memoria"]["headers"]["X-Memoria-Namespace"] == "repo:shop-api"


def test_install_is_surgical_idempotent_and_keeps_the_file_style(home: Path, repo: Path) -> None:
    original = (
        '{\n    "mcpServers": {\n        "github": {"type": "http", "url": "https://x/mcp"}\n    },\n'
        '    "note": "café"\n}\n'
    )
    path = repo / ".mcp.json"
    path.write_text(original)
    _run("install", "--scope", "project", "--project-dir", str(repo))
    first = path.read_text()
    config = json.loads(first)
    assert list(config) == ["mcpServers", "note"] and config["note"] == "café"
    assert list(config["mcpServers"]) == ["github", "memoria"]
    assert config["mcpServers"]["github"] == {"type": "http", "url": "https://x/mcp"}
    assert '\n    "mcpServers"' in first and "café" in first and first.endswith("}\n")
    before = path.stat().st_mtime_ns
    _run("install", "--scope", "project", "--project-dir", str(repo))
    assert path.read_text() == first and path.stat().st_mtime_ns == before  # no rewrite at all
    _run("uninstall", "--scope", "project", "--project-dir", str(repo))
    assert json.loads(path.read_text()) == json.loads(original)


def test_user_and_local_scopes_edit_claude_json_where_claude_code_keeps_them(home: Path, repo: Path) -> None:
    claude_json = home / ".claude.json"
    claude_json.write_text(
        json.dumps({"numStartups": 3, "mcpServers": {"other": {"type": "stdio", "command": "x"}}}, indent=2)
    )
    claude_json.chmod(0o600)
    _run("install", "--scope", "user")
    _run("install", "--scope", "local", "--project-dir", str(repo))
    config = json.loads(claude_json.read_text())
    assert config["numStartups"] == 3
    assert set(config["mcpServers"]) == {"other", "memoria"}
    assert "X-Memoria-Namespace" not in config["mcpServers"]["memoria"]["headers"]  # every project
    local = config["projects"][str(repo.resolve())]["mcpServers"]["memoria"]
    assert local["headers"] == {"Authorization": KEY_HEADER, "X-Memoria-Namespace": "repo:shop-api"}
    assert claude_json.stat().st_mode & 0o777 == 0o600

    _run("uninstall", "--scope", "local", "--project-dir", str(repo))
    _run("uninstall", "--scope", "user")
    config = json.loads(claude_json.read_text())
    assert config == {
        "numStartups": 3,
        "mcpServers": {"other": {"type": "stdio", "command": "x"}},
        "projects": {str(repo.resolve()): {}},
    }


def test_namespace_option_pins_the_namespace(home: Path, repo: Path) -> None:
    _run("install", "--scope", "project", "--project-dir", str(repo), "--namespace", "team-notes")
    config = json.loads((repo / ".mcp.json").read_text())
    assert config["mcpServers"]["memoria"]["headers"]["X-Memoria-Namespace"] == "team-notes"


def test_a_file_that_is_not_json_is_left_alone_with_a_clear_error(home: Path, repo: Path) -> None:
    path = repo / ".mcp.json"
    path.write_text("{not json")
    result = CliRunner().invoke(main, ["mcp", "install", "--scope", "project", "--project-dir", str(repo)])
    assert result.exit_code == 1
    assert "is not valid JSON" in result.output and "left as it is" in result.output
    assert path.read_text() == "{not json"


def test_uninstall_removes_the_file_it_emptied_as_hook_uninstall_does(home: Path, repo: Path) -> None:
    path = repo / ".mcp.json"
    _run("install", "--scope", "project", "--project-dir", str(repo))
    assert path.exists()
    output = _run("uninstall", "--scope", "project", "--project-dir", str(repo))
    assert "removed the MCP server memoria" in output
    assert not path.exists(), "no `{}` left behind in a project that had no .mcp.json"


def test_uninstall_without_an_install_changes_nothing(home: Path, repo: Path) -> None:
    output = _run("uninstall", "--scope", "project", "--project-dir", str(repo))
    assert "no MCP server memoria" in output
    assert not (repo / ".mcp.json").exists()
