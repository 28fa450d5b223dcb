"""`memoria hook install|uninstall` on Claude Code settings files that already hold other things."""

from __future__ import annotations

import copy
import json
import os
import shlex
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from app.cli import main

KEY = "mem_do-not-write-me-anywhere"

EXISTING: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(git status)"], "deny": ["Read(./.env)"]},
    "env": {"FOO": "bar"},
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [{"type": "command", "command": "~/bin/check-bash.sh", "timeout": 5}],
            }
        ],
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": "~/bin/add-branch-name.sh"}]},
        ],
    },
}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def cli(home: Path, *args: str) -> Result:
    env = {"HOME": str(home), "MEMORIA_CLIENT__API_KEY": KEY, "MEMORIA_CLIENT__URL": "http://127.0.0.1:8080"}
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=4))
    return path


def read(path: Path) -> Any:
    return json.loads(path.read_text())


def memoria_hooks(settings: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        hook
        for group in settings["hooks"]["UserPromptSubmit"]
        for hook in group["hooks"]
        if "memoria" in json.dumps(hook) or "user-prompt-submit" in json.dumps(hook)
    ]


def test_user_scope_http_install_keeps_everything_else_and_uninstall_restores_it(home: Path) -> None:
    path = write(home / ".claude" / "settings.json", EXISTING)
    result = cli(home, "hook", "install")
    assert result.exit_code == 0, result.output
    installed = read(path)
    (ours,) = memoria_hooks(installed)
    assert ours == {
        "type": "http",
        "url": "http://127.0.0.1:8080/v1/hooks/claude-code/user-prompt-submit",
        "headers": {"Authorization": "Bearer $MEMORIA_CLIENT__API_KEY"},
        "allowedEnvVars": ["MEMORIA_CLIENT__API_KEY"],
        "timeout": 2,
    }
    expected = copy.deepcopy(EXISTING)
    expected["hooks"]["UserPromptSubmit"].append({"hooks": [ours]})
    assert installed == expected
    assert KEY not in path.read_text()

    assert cli(home, "hook", "uninstall").exit_code == 0
    assert read(path) == EXISTING


def test_installing_twice_changes_nothing(home: Path) -> None:
    path = write(home / ".claude" / "settings.json", EXISTING)
    cli(home, "hook", "install")
    first = path.read_text()
    again = cli(home, "hook", "install")
    assert "already installed" in again.output
    assert path.read_text() == first


def test_switching_mode_replaces_our_hook_instead_of_adding_one(home: Path) -> None:
    path = write(home / ".claude" / "settings.json", EXISTING)
    cli(home, "hook", "install", "--mode", "http")
    cli(home, "hook", "install", "--mode", "command", "--namespace", "team-platform")
    (ours,) = memoria_hooks(read(path))
    assert ours["type"] == "command" and ours["timeout"] == 3
    argv = shlex.split(ours["command"])
    assert argv[-2:] == ["--namespace", "team-platform"] and "user-prompt-submit" in argv
    assert KEY not in path.read_text()
    cli(home, "hook", "uninstall")
    assert read(path) == EXISTING


def test_install_into_a_missing_file_creates_it_and_uninstall_empties_it(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    cli(home, "hook", "install")
    assert len(memoria_hooks(read(path))) == 1
    cli(home, "hook", "uninstall")
    assert read(path) == {}


def test_uninstall_keeps_another_hook_sharing_our_group(home: Path) -> None:
    shared = {
        "hooks": {
            "UserPromptSubmit": [
                {
                    "hooks": [
                        {"type": "command", "command": "~/bin/add-branch-name.sh"},
                        {
                            "type": "http",
                            "url": "http://10.0.0.5:8080/v1/hooks/claude-code/user-prompt-submit",
                        },
                    ]
                }
            ]
        }
    }
    path = write(home / ".claude" / "settings.json", shared)
    cli(home, "hook", "uninstall")
    assert read(path) == {
        "hooks": {
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "~/bin/add-branch-name.sh"}]}]
        }
    }


@pytest.mark.parametrize(("scope", "name"), [("project", "settings.json"), ("local", "settings.local.json")])
def test_project_scopes_write_under_the_project(home: Path, tmp_path: Path, scope: str, name: str) -> None:
    project = tmp_path / "shop-api"
    result = cli(home, "hook", "install", "--scope", scope, "--project-dir", str(project))
    assert result.exit_code == 0, result.output
    path = project / ".claude" / name
    assert len(memoria_hooks(read(path))) == 1
    assert KEY not in path.read_text()
    assert not (home / ".claude").exists()


def test_a_settings_file_that_is_not_json_is_left_alone(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"model": "opus",')  # half-written by hand
    result = CliRunner().invoke(main, ["hook", "install"], env={"HOME": str(home)})
    assert result.exit_code != 0
    assert "is not valid JSON" in result.output
    assert path.read_text() == '{"model": "opus",'


def test_file_permissions_are_kept(home: Path) -> None:
    path = write(home / ".claude" / "settings.json", EXISTING)
    path.chmod(0o600)
    cli(home, "hook", "install")
    assert path.stat().st_mode & 0o777 == 0o600


def test_the_hook_command_explains_itself_with_help(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--help` is the one argument click handles; everything else goes to the fail-open hook."""

    def exit_without_killing_pytest(code: int) -> None:  # the hook ends with os._exit
        raise SystemExit(code)

    monkeypatch.setattr(os, "_exit", exit_without_killing_pytest)
    result = cli(home, "hook", "user-prompt-submit", "--help")
    assert result.exit_code == 0, result.output
    assert "event JSON on stdin" in result.output
    assert "--url URL" in result.output and "--namespace NAME" in result.output
