"""Memoria's plugin file for OpenCode (`app.hooks.install_opencode`): one file of Memoria's in OpenCode's
plugin folder that runs the hook client for each subcommand asked for, a person's own plugins and
config left alone, idempotent, and an uninstall that removes only what the install created."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from app.cli import main
from app.hooks import install_opencode as opencode
from app.hooks.agent_install import InstallRequest

URL = "http://127.0.0.1:8080"


def _config(source: str) -> dict[str, Any]:
    """The settings the installer put into the plugin file."""
    match = re.search(r"^const MEMORIA = (\{.*\});$", source, re.MULTILINE)
    assert match, source[:2000]
    config: dict[str, Any] = json.loads(match.group(1))
    return config


def _request(tmp_path: Path, **changes: Any) -> InstallRequest:
    return replace(InstallRequest(scope="user", project_dir=tmp_path / "repo", url=URL), **changes)


def test_the_plugin_runs_the_hook_client_as_opencode_for_each_subcommand_asked_for() -> None:
    everything = _config(opencode.plugin_source(URL, "repo:wombat-4", list(opencode.SUBCOMMANDS)))
    assert set(everything["commands"]) == {"session-start", "user-prompt-submit", "capture"}
    for sub, argv in everything["commands"].items():
        assert sub in argv
        assert argv[-4:] == ["--namespace", "repo:wombat-4", "--agent", "opencode"]
    assert everything["timeoutMs"] == 3000
    recall_only = opencode.planned(_request(Path("/"), session_start=False, capture=False))
    assert recall_only == ["user-prompt-submit"]


def test_user_install_writes_one_file_of_memorias_and_uninstall_removes_what_it_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    config = tmp_path / ".config" / "opencode"
    config.mkdir(parents=True)
    (config / "opencode.json").write_text('{"autoupdate": false}\n')
    request = _request(tmp_path)

    installed = opencode.install_plugin(request)
    path = config / "plugins" / "memoria.js"
    assert installed.changed == [path]
    assert installed.events == ["SessionStart", "UserPromptSubmit", "session.idle"]
    assert path.read_text().startswith(opencode.MARKER)
    assert opencode.installed_plugin(None) == (path, ["SessionStart", "UserPromptSubmit", "session.idle"])
    assert opencode.install_plugin(request).changed == []  # idempotent

    assert opencode.uninstall_plugin(request).changed == [path]
    assert not (config / "plugins").exists()
    assert (config / "opencode.json").read_text() == '{"autoupdate": false}\n'
    assert opencode.uninstall_plugin(request).changed == []


def test_a_persons_own_plugins_stay_and_their_own_memoria_js_is_refused(tmp_path: Path) -> None:
    request = _request(tmp_path, scope="project")
    plugins = tmp_path / "repo" / ".opencode" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "notify.js").write_text("export const Notify = async () => ({})\n")

    opencode.install_plugin(request)
    opencode.uninstall_plugin(request)
    assert [p.name for p in plugins.iterdir()] == ["notify.js"]

    (plugins / "memoria.js").write_text("export const Mine = async () => ({})\n")
    with pytest.raises(opencode.OpenCodeConfigError, match="not Memoria's plugin"):
        opencode.install_plugin(request)
    with pytest.raises(opencode.OpenCodeConfigError, match="not Memoria's plugin"):
        opencode.uninstall_plugin(request)
    assert (plugins / "memoria.js").read_text() == "export const Mine = async () => ({})\n"


def test_project_install_through_the_cli_goes_to_the_projects_opencode_folder(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    runner = CliRunner()
    env = {"HOME": str(tmp_path / "home")}
    args = ["--agent", "opencode", "--scope", "project", "--project-dir", str(repo)]
    installed = runner.invoke(main, ["hook", "install", *args, "--no-capture"], env=env)
    assert installed.exit_code == 0, installed.output
    path = repo / ".opencode" / "plugins" / "memoria.js"
    assert set(_config(path.read_text())["commands"]) == {"session-start", "user-prompt-submit"}
    removed = runner.invoke(main, ["hook", "uninstall", *args], env=env)
    assert removed.exit_code == 0, removed.output
    assert list(repo.iterdir()) == []
