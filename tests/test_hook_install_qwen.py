"""Memoria's hooks merged into Qwen Code settings files (`app.hooks.install_qwen`): Claude Code's event
names, timeouts every Qwen Code release reads as milliseconds, a person's own settings and hooks kept,
idempotent, and an uninstall that gives the file back byte for byte."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from app.cli import main
from app.hooks import install_qwen as qwen

URL = "http://127.0.0.1:8080"

#: A person's own settings with a hook of their own on an event Memoria also uses.
EXISTING: dict[str, Any] = {
    "$version": 4,
    "security": {"auth": {"selectedType": "openai"}},
    "hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "~/bin/add-branch-name.sh"}]}],
        "PreToolUse": [
            {"matcher": "write_file", "hooks": [{"type": "command", "command": "~/bin/check.sh"}]}
        ],
    },
}


def test_the_plan_puts_recall_and_capture_on_claude_codes_events_with_millisecond_timeouts() -> None:
    plan = qwen.planned_hooks(URL, None)
    argvs = {event: shlex.split(hook["command"]) for event, hook in plan.items()}
    subs = ("session-start", "user-prompt-submit", "capture")
    assert {event: next(arg for arg in argv if arg in subs) for event, argv in argvs.items()} == {
        "SessionStart": "session-start",
        "UserPromptSubmit": "user-prompt-submit",
        "Stop": "capture",
        "PreCompact": "capture",
        "SessionEnd": "capture",
    }
    assert all(argv[-2:] == ["--agent", "qwen"] for argv in argvs.values())
    # 0.24.4 reads a timeout of 1000 or more as milliseconds, as earlier releases read every timeout
    assert {event: hook["timeout"] for event, hook in plan.items()} == {
        "SessionStart": 3000,
        "UserPromptSubmit": 3000,
        "Stop": 10000,
        "PreCompact": 10000,
        "SessionEnd": 10000,
    }
    assert set(qwen.planned_hooks(URL, None, capture=False)) == {"SessionStart", "UserPromptSubmit"}


def test_install_keeps_a_persons_hooks_is_idempotent_and_uninstall_restores_the_bytes(tmp_path: Path) -> None:
    original = json.dumps(EXISTING, indent=4) + "\n"
    path = tmp_path / ".qwen" / "settings.json"
    path.parent.mkdir()
    path.write_text(original)
    plan = qwen.planned_hooks(URL, "repo:quokka-9")

    assert qwen.install(path, plan) is True
    settings = json.loads(path.read_text())
    assert settings["hooks"]["PreToolUse"] == EXISTING["hooks"]["PreToolUse"]
    assert settings["hooks"]["UserPromptSubmit"] == [
        *EXISTING["hooks"]["UserPromptSubmit"],
        {"hooks": [plan["UserPromptSubmit"]]},
    ]
    once = path.read_bytes()
    assert qwen.install(path, plan) is False
    assert path.read_bytes() == once

    assert qwen.uninstall(path) is True
    assert path.read_text() == original
    assert qwen.uninstall(path) is False


def test_memoria_hook_install_agent_qwen_writes_the_users_settings_and_uninstall_removes_what_it_made(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    path = home / ".qwen" / "settings.json"
    env = {"HOME": str(home), "MEMORIA_CLIENT__URL": URL, "MEMORIA_CLIENT__API_KEY": "mem_not-in-any-file"}

    def memoria(*args: str) -> Result:
        return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)

    installed = memoria("hook", "install", "--agent", "qwen")
    assert installed.exit_code == 0, installed.output
    assert f"Qwen Code: installed in {path}" in installed.output
    assert qwen.QWEN.installed is not None
    assert qwen.QWEN.installed(path.parent) == (path, list(qwen.EVENTS))
    assert "mem_not-in-any-file" not in path.read_text()
    assert "Qwen Code: already installed" in memoria("hook", "install", "--agent", "qwen").output

    removed = memoria("hook", "uninstall", "--agent", "qwen")
    assert removed.exit_code == 0, removed.output
    assert not (home / ".qwen").exists()
