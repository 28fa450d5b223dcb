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


def _helper_output(command: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run a `headersHelper` command as Claude Code does: through a shell, from another directory."""
    return subprocess.run(  # noqa: S602 - a shell is what Claude Code runs it with
        command, shell=True, capture_output=True, text=True, env=env, cwd="/", timeout=60, check=False
    )


def test_local_and_user_installs_ask_a_key_helper_that_reads_the_key_file(home: Path, repo: Path) -> None:
    _run("install", "--scope", "local", "--project-dir", str(repo))
    _run("install", "--scope", "user")
    config = json.loads((home / ".claude.json").read_text())
    local = config["projects"][str(repo.resolve())]["mcpServers"]["memoria"]
    assert local["headersHelper"] == config["mcpServers"]["memoria"]["headersHelper"]
    helper = local["headersHelper"]
    assert helper.isascii() and helper.isprintable() and "    " not in helper

    key_file = home / ".config" / "memoria" / "key"
    key_file.parent.mkdir(parents=True)
    key_file.write_text("mem_from_the_key_file\n")
    key_file.chmod(0o600)
    # PYTHONPATH: the checkout under test, as the interpreter that wrote the command would find it
    env = {"HOME": str(home), "PATH": os.environ["PATH"], "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    from_file = _helper_output(helper, env)
    assert from_file.returncode == 0, from_file.stderr
    assert json.loads(from_file.stdout) == {"Authorization": "Bearer mem_from_the_key_file"}
    from_env = _helper_output(helper, env | {"MEMORIA_CLIENT__API_KEY": "mem_from_the_environment"})
    assert json.loads(from_env.stdout) == {"Authorization": "Bearer mem_from_the_environment"}

    key_file.unlink()
    none = _helper_output(helper, env)
    assert none.returncode == 1 and none.stdout == "" and "memoria" in none.stderr


def test_a_project_install_keeps_the_key_out_of_the_committed_file_and_names_no_helper(
    home: Path, repo: Path
) -> None:
    _run("install", "--scope", "project", "--project-dir", str(repo))
    entry = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["memoria"]
    assert "headersHelper" not in entry  # a path of this machine, in a file the team shares


def _key_file(home: Path) -> None:
    path = home / ".config" / "memoria" / "key"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("mem_only_in_the_key_file\n")
    path.chmod(0o600)


def test_install_warns_when_claude_code_would_send_no_key(
    home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMORIA_CLIENT__API_KEY")
    nothing = _run("install", "--scope", "user")
    assert "Warning: the memory tools are unreachable" in nothing and "memoria login" in nothing

    _key_file(home)
    assert "Warning" not in _run("install", "--scope", "user")  # the helper runs at user scope
    project = _run("install", "--scope", "project", "--project-dir", str(repo))
    assert "Warning" in project and "MEMORIA_CLIENT__API_KEY is not set" in project
    assert "--scope local" in project
    untrusted = _run("install", "--scope", "local", "--project-dir", str(repo))
    assert "Warning" in untrusted and "trust dialog" in untrusted

    claude_json = home / ".claude.json"
    config = json.loads(claude_json.read_text())
    config["projects"][str(repo.resolve())]["hasTrustDialogAccepted"] = True
    claude_json.write_text(json.dumps(config))
    assert "Warning" not in _run("install", "--scope", "local", "--project-dir", str(repo))


def test_allow_tools_adds_one_rule_to_your_own_settings_and_uninstall_restores_them_byte_for_byte(
    home: Path, repo: Path
) -> None:
    settings = repo / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    original = (
        '{\n    "permissions": {\n        "allow": ["Bash(make test)"]\n    },\n'
        '    "enabledMcpjsonServers": ["memoria"]\n}\n'
    )
    settings.write_text(original)
    output = _run("install", "--scope", "project", "--project-dir", str(repo), "--allow-tools")
    assert f"allowed: mcp__memoria in {settings}" in output
    written = settings.read_text()
    assert json.loads(written)["permissions"]["allow"] == ["Bash(make test)", "mcp__memoria"]
    assert not (repo / ".claude" / "settings.json").exists()  # the team's file is not touched

    again = _run("install", "--scope", "project", "--project-dir", str(repo), "--allow-tools")
    assert "already allowed" in again and settings.read_text() == written

    removed = _run("uninstall", "--scope", "project", "--project-dir", str(repo))
    assert "removed mcp__memoria" in removed
    assert settings.read_text() == original


def test_allow_tools_in_a_fresh_project_leaves_no_settings_file_after_uninstall(
    home: Path, repo: Path
) -> None:
    _run("install", "--scope", "local", "--project-dir", str(repo), "--allow-tools")
    settings = repo / ".claude" / "settings.local.json"
    assert json.loads(settings.read_text()) == {"permissions": {"allow": ["mcp__memoria"]}}
    _run("uninstall", "--scope", "local", "--project-dir", str(repo))
    assert not settings.exists()


def test_a_user_install_allows_the_tools_in_the_user_settings(home: Path) -> None:
    _run("install", "--scope", "user", "--allow-tools")
    user_settings = home / ".claude" / "settings.json"
    assert json.loads(user_settings.read_text()) == {"permissions": {"allow": ["mcp__memoria"]}}
    _run("uninstall", "--scope", "user")
    assert not user_settings.exists()


def test_without_allow_tools_the_install_says_how_headless_runs_get_them(home: Path, repo: Path) -> None:
    output = _run("install", "--scope", "project", "--project-dir", str(repo))
    assert "--allow-tools" in output
    assert not (repo / ".claude").exists()
