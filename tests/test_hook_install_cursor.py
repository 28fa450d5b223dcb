"""Memoria's hook in Cursor's hooks.json (`app.hooks.install_cursor`) and its server in Cursor's
mcp.json (`app.mcp.install_cursor`): only sessionStart (the one Cursor event that adds context), a
flat hook with a timeout in seconds, a person's own hooks in the same file kept, idempotent, an
uninstall that gives the file back byte for byte, `--agent all` finding Cursor by either of its
commands, and the key never written."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from app.cli import main
from app.hooks import install_cursor as cursor
from app.hooks import installers
from app.hooks.agent_install import InstallRequest
from app.mcp.registrations import READERS

URL = "http://127.0.0.1:8080"

#: A person's own ~/.cursor/hooks.json, with a hook on the event Memoria uses and one on another.
EXISTING: dict[str, Any] = {
    "version": 1,
    "hooks": {
        "sessionStart": [{"command": "./hooks/session-init.sh"}],
        "afterFileEdit": [{"command": "./hooks/format.sh", "timeout": 30}],
        "stop": [{"command": "./hooks/audit.sh", "loop_limit": 10}],
    },
}


def test_the_plan_puts_only_session_start_on_cursors_event_with_a_timeout_in_seconds() -> None:
    plan = cursor.planned_hooks(URL, None)
    assert list(plan) == ["sessionStart"]
    (hook,) = plan.values()
    argv = shlex.split(hook["command"])
    assert "session-start" in argv and argv[-2:] == ["--agent", "cursor"]
    # Cursor's per-hook `timeout` is in seconds: Claude Code's command timeout, not milliseconds
    assert hook["timeout"] == 3
    assert cursor.planned_hooks(URL, None, session_start=False) == {}


def test_install_keeps_a_persons_hooks_is_idempotent_and_uninstall_restores_the_bytes(tmp_path: Path) -> None:
    original = json.dumps(EXISTING, indent=4)  # no final newline: kept as it is
    path = tmp_path / ".cursor" / "hooks.json"
    path.parent.mkdir()
    path.write_text(original)
    plan = cursor.planned_hooks(URL, "repo:numbat-7")

    assert cursor.install(path, plan) is True
    config = json.loads(path.read_text())
    assert config["hooks"]["sessionStart"] == [*EXISTING["hooks"]["sessionStart"], plan["sessionStart"]]
    assert config["hooks"]["afterFileEdit"] == EXISTING["hooks"]["afterFileEdit"]
    assert config["hooks"]["stop"] == EXISTING["hooks"]["stop"]
    once = path.read_bytes()
    assert cursor.install(path, plan) is False
    assert path.read_bytes() == once

    assert cursor.uninstall(path) is True
    assert path.read_text() == original
    assert cursor.uninstall(path) is False


def test_a_file_without_a_version_gets_none_added_so_the_uninstall_gives_it_back(tmp_path: Path) -> None:
    original = '{"hooks": {"afterFileEdit": [{"command": "./hooks/format.sh"}]}}\n'
    path = tmp_path / "hooks.json"
    path.write_text(original)
    assert cursor.install(path, cursor.planned_hooks(URL, None))
    assert "version" not in json.loads(path.read_text())
    assert cursor.uninstall(path)
    assert path.read_text() == original


def test_an_uninstall_removes_the_file_and_cursor_folder_an_install_into_a_fresh_project_created(
    tmp_path: Path,
) -> None:
    request = InstallRequest(scope="project", project_dir=tmp_path, url=URL)
    report = cursor.install_hooks(request)
    assert report.changed == [tmp_path / ".cursor" / "hooks.json"]
    assert json.loads(report.changed[0].read_text())["version"] == 1
    assert report.events == ["sessionStart"]
    assert any("no per-prompt recall" in note for note in report.notes)
    assert cursor.uninstall_hooks(request).changed == report.changed
    assert list(tmp_path.iterdir()) == []


def test_a_file_cursor_cannot_read_as_an_object_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    path.write_text('{"version": 1, "hooks": []}')
    request = InstallRequest(scope="user", project_dir=tmp_path, url=URL, config_dir=tmp_path)
    with pytest.raises(cursor.CursorConfigError, match='"hooks" is not an object'):
        cursor.install_hooks(request)
    assert path.read_text() == '{"version": 1, "hooks": []}'


def _memoria(env: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def test_memoria_hook_install_agent_cursor_writes_the_users_hooks_json_and_status_reads_it(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    (home / ".cursor").mkdir(parents=True)
    path = home / ".cursor" / "hooks.json"
    path.write_text(json.dumps(EXISTING, indent=2) + "\n")
    before = path.read_bytes()
    env = {"HOME": str(home), "MEMORIA_CLIENT__URL": URL, "MEMORIA_CLIENT__API_KEY": "mem_not-in-any-file"}

    installed = _memoria(env, "hook", "install", "--agent", "cursor")
    assert installed.exit_code == 0, installed.output
    assert f"Cursor: installed in {path}" in installed.output
    assert "mem_not-in-any-file" not in path.read_text()
    assert cursor.CURSOR.installed is not None
    assert cursor.CURSOR.installed(home / ".cursor") == (path, ["sessionStart"])
    assert "Cursor: already installed" in _memoria(env, "hook", "install", "--agent", "cursor").output

    removed = _memoria(env, "hook", "uninstall", "--agent", "cursor")
    assert removed.exit_code == 0, removed.output
    assert path.read_bytes() == before


def test_agent_all_finds_cursor_by_its_cli_or_its_editor_command(tmp_path: Path) -> None:
    for command in ("cursor-agent", "cursor"):
        bin_dir = tmp_path / command
        bin_dir.mkdir()
        (bin_dir / command).write_text("#!/bin/sh\n")
        (bin_dir / command).chmod(0o755)
        assert installers.detected({"PATH": str(bin_dir)}) == ["cursor"]
    assert installers.detected({"PATH": str(tmp_path)}) == []
    assert cursor.CURSOR.executables == ("cursor-agent", "cursor")


def test_memoria_mcp_install_agent_cursor_names_the_key_variable_and_uninstall_restores_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".cursor").mkdir(parents=True)
    path = home / ".cursor" / "mcp.json"
    theirs = {"mcpServers": {"docs": {"command": "npx", "args": ["-y", "docs-mcp"]}}}
    path.write_text(json.dumps(theirs, indent=2) + "\n")
    before = path.read_bytes()
    env = {"HOME": str(home), "MEMORIA_CLIENT__URL": URL, "MEMORIA_CLIENT__API_KEY": ""}

    done = _memoria(
        env, "mcp", "install", "--agent", "cursor", "--scope", "user", "--namespace", "repo:numbat-7"
    )
    assert done.exit_code == 0, done.output
    assert "the tools would be unreachable" in done.output  # no key in this shell
    servers = json.loads(path.read_text())["mcpServers"]
    assert servers["docs"] == theirs["mcpServers"]["docs"]
    assert servers["memoria"] == {
        "url": f"{URL}/mcp",
        "headers": {
            "Authorization": "Bearer ${env:MEMORIA_CLIENT__API_KEY}",
            "X-Memoria-Namespace": "repo:numbat-7",
        },
    }
    monkeypatch.setenv("HOME", str(home))
    (registration,) = READERS["cursor"](tmp_path)
    assert READERS["cursor"](home) == [registration]  # the home folder as the project: one file, once
    assert (registration.scope, registration.file, registration.url) == ("user", path, f"{URL}/mcp")
    assert registration.key_from_env_only

    assert _memoria(env, "mcp", "uninstall", "--agent", "cursor", "--scope", "user").exit_code == 0
    assert path.read_bytes() == before
