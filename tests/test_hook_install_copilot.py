"""Memoria's hooks in GitHub Copilot CLI's hook files (`app.hooks.install_copilot`): Copilot's flat
hook shape and camelCase events, timeouts in seconds, a person's own hooks in the same file kept,
idempotent, an uninstall that gives the file back byte for byte, and `$COPILOT_HOME` honoured."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from app.cli import main
from app.hooks import install_copilot as copilot
from app.hooks.agent_install import InstallRequest

URL = "http://127.0.0.1:8080"

#: A person's own hook file, named as Memoria's is, with a hook on an event Memoria also uses.
EXISTING: dict[str, Any] = {
    "version": 1,
    "hooks": {
        "userPromptSubmitted": [{"type": "command", "bash": "~/bin/log-prompt.sh", "timeoutSec": 5}],
        "preToolUse": [{"type": "command", "bash": "~/bin/check.sh", "powershell": "check.ps1"}],
    },
}


def test_the_plan_puts_session_start_recall_and_capture_on_copilots_events_with_second_timeouts() -> None:
    plan = copilot.planned_hooks(URL, None)
    argvs = {event: shlex.split(hook["bash"]) for event, hook in plan.items()}
    subs = ("session-start", "user-prompt-submit", "capture")
    assert {event: next(arg for arg in argv if arg in subs) for event, argv in argvs.items()} == {
        "sessionStart": "session-start",
        "userPromptSubmitted": "user-prompt-submit",
        "agentStop": "capture",
    }
    assert all(argv[-2:] == ["--agent", "copilot"] for argv in argvs.values())
    assert all(hook["type"] == "command" and "command" not in hook for hook in plan.values())
    # Copilot CLI reads timeoutSec in seconds (default 30); capture gets Claude Code's capture timeout
    assert {event: hook["timeoutSec"] for event, hook in plan.items()} == {
        "sessionStart": 3,
        "userPromptSubmitted": 3,
        "agentStop": 10,
    }


def test_install_keeps_a_persons_hooks_is_idempotent_and_uninstall_restores_the_bytes(tmp_path: Path) -> None:
    original = json.dumps(EXISTING, indent=4)  # no final newline: kept as it is
    path = tmp_path / "hooks" / "memoria.json"
    path.parent.mkdir()
    path.write_text(original)
    plan = copilot.planned_hooks(URL, "repo:quokka-9")

    assert copilot.install(path, plan) is True
    config = json.loads(path.read_text())
    assert config["hooks"]["preToolUse"] == EXISTING["hooks"]["preToolUse"]
    assert config["hooks"]["userPromptSubmitted"] == [
        *EXISTING["hooks"]["userPromptSubmitted"],
        plan["userPromptSubmitted"],
    ]
    assert config["hooks"]["sessionStart"] == [plan["sessionStart"]]
    assert config["hooks"]["agentStop"] == [plan["agentStop"]]
    once = path.read_bytes()
    assert copilot.install(path, plan) is False
    assert path.read_bytes() == once

    assert copilot.uninstall(path) is True
    assert path.read_text() == original
    assert copilot.uninstall(path) is False


def test_a_reinstall_without_session_start_takes_out_the_one_an_earlier_install_added(tmp_path: Path) -> None:
    path = tmp_path / "hooks" / "memoria.json"
    assert copilot.install(path, copilot.planned_hooks(URL, None))
    assert copilot.install(path, copilot.planned_hooks(URL, None, session_start=False))
    assert list(copilot.installed(json.loads(path.read_text()))) == ["userPromptSubmitted", "agentStop"]


def test_a_reinstall_without_capture_takes_out_the_agent_stop_hook_and_keeps_the_bytes_of_the_rest(
    tmp_path: Path,
) -> None:
    path = tmp_path / "hooks" / "memoria.json"
    without = tmp_path / "without-capture.json"
    assert copilot.install(without, copilot.planned_hooks(URL, None, capture=False))
    assert copilot.install(path, copilot.planned_hooks(URL, None))
    assert copilot.install(path, copilot.planned_hooks(URL, None, capture=False))
    assert list(copilot.installed(json.loads(path.read_text()))) == ["sessionStart", "userPromptSubmitted"]
    assert path.read_bytes() == without.read_bytes()


def test_memoria_hook_install_agent_copilot_writes_copilot_home_and_uninstall_removes_what_it_made(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    copilot_home = tmp_path / "copilot-home"
    (copilot_home / "hooks").mkdir(parents=True)
    theirs = copilot_home / "hooks" / "theirs.json"
    theirs.write_text(json.dumps(EXISTING))
    path = copilot_home / "hooks" / "memoria.json"
    env = {
        "HOME": str(home),
        "COPILOT_HOME": str(copilot_home),
        "MEMORIA_CLIENT__URL": URL,
        "MEMORIA_CLIENT__API_KEY": "mem_not-in-any-file",
    }

    def memoria(*args: str) -> Result:
        return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)

    installed = memoria("hook", "install", "--agent", "copilot")
    assert installed.exit_code == 0, installed.output
    assert f"GitHub Copilot CLI: installed in {path}" in installed.output
    assert json.loads(path.read_text())["version"] == 1
    assert copilot.COPILOT.installed is not None
    assert copilot.COPILOT.installed(copilot_home) == (path, list(copilot.EVENTS))
    assert "mem_not-in-any-file" not in path.read_text()
    assert "GitHub Copilot CLI: already installed" in memoria("hook", "install", "--agent", "copilot").output

    removed = memoria("hook", "uninstall", "--agent", "copilot")
    assert removed.exit_code == 0, removed.output
    assert not path.exists()
    assert json.loads(theirs.read_text()) == EXISTING
    assert not (home / ".copilot").exists()


def test_an_uninstall_removes_the_copilot_folder_an_install_into_a_fresh_home_created(tmp_path: Path) -> None:
    request = InstallRequest(scope="user", project_dir=tmp_path, url=URL, config_dir=tmp_path / ".copilot")
    assert copilot.install_hooks(request).changed == [tmp_path / ".copilot" / "hooks" / "memoria.json"]
    copilot.uninstall_hooks(request)
    assert list(tmp_path.iterdir()) == []


def test_a_project_install_writes_the_repositorys_github_hooks_folder(tmp_path: Path) -> None:
    request = InstallRequest(scope="project", project_dir=tmp_path, url=URL)
    report = copilot.install_hooks(request)
    assert report.changed == [tmp_path / ".github" / "hooks" / "memoria.json"]
    assert copilot.uninstall_hooks(request).changed == report.changed
    assert not (tmp_path / ".github").exists()
