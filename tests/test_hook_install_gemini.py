"""Memoria's hooks merged into Gemini CLI settings files (`app.hooks.install_gemini`): the events Gemini
CLI names, timeouts in milliseconds, a person's own settings and hooks kept, idempotent, and an
uninstall that gives the file back byte for byte."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from app.cli import main
from app.hooks import install_gemini as gemini

URL = "http://127.0.0.1:8080"

#: A person's own settings, in the shape Gemini CLI documents, with a hook of their own on an event
#: Memoria also uses and one on an event Memoria leaves alone.
EXISTING: dict[str, Any] = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "general": {"vimMode": True},
    "hooks": {
        "BeforeTool": [
            {
                "matcher": "write_file|replace",
                "hooks": [{"type": "command", "command": "~/bin/check.sh", "timeout": 5000}],
            }
        ],
        "BeforeAgent": [
            {"hooks": [{"name": "branch", "type": "command", "command": "~/bin/add-branch-name.sh"}]}
        ],
    },
}


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_plan_puts_each_subcommand_on_gemini_clis_event_with_millisecond_timeouts() -> None:
    plan = gemini.planned_hooks(URL, None)
    subcommands = {event: shlex.split(hook["command"]) for event, hook in plan.items()}
    subs = ("session-start", "user-prompt-submit", "capture")
    assert {event: next(arg for arg in argv if arg in subs) for event, argv in subcommands.items()} == {
        "SessionStart": "session-start",
        "BeforeAgent": "user-prompt-submit",
        "AfterAgent": "capture",
        "PreCompress": "capture",
        "SessionEnd": "capture",
    }
    assert all(argv[-2:] == ["--agent", "gemini"] for argv in subcommands.values())
    assert {event: hook["timeout"] for event, hook in plan.items()} == {
        "SessionStart": 3000,
        "BeforeAgent": 3000,
        "AfterAgent": 10000,
        "PreCompress": 10000,
        "SessionEnd": 10000,
    }
    assert plan["BeforeAgent"]["name"] == "memoria-recall"


def test_install_keeps_a_persons_settings_and_hooks_is_idempotent_and_uninstall_restores_the_bytes(
    tmp_path: Path,
) -> None:
    original = json.dumps(EXISTING, indent=4) + "\n"
    path = _write(tmp_path / ".gemini" / "settings.json", original)
    plan = gemini.planned_hooks(URL, "repo:quokka-9")

    assert gemini.install(path, plan) is True
    settings = json.loads(path.read_text())
    assert {k: v for k, v in settings.items() if k != "hooks"} == {
        k: v for k, v in EXISTING.items() if k != "hooks"
    }
    assert settings["hooks"]["BeforeTool"] == EXISTING["hooks"]["BeforeTool"]
    assert settings["hooks"]["BeforeAgent"] == [
        *EXISTING["hooks"]["BeforeAgent"],
        {"hooks": [plan["BeforeAgent"]]},
    ]
    assert gemini.installed(settings) == {event: [hook] for event, hook in plan.items()}
    assert path.read_text().startswith('{\n    "security"'), "the file's own indentation was not kept"

    once = path.read_bytes()
    assert gemini.install(path, plan) is False
    assert path.read_bytes() == once

    assert gemini.uninstall(path) is True
    assert path.read_text() == original
    assert gemini.uninstall(path) is False


def test_an_install_with_other_options_replaces_ours_and_drops_what_was_switched_off(tmp_path: Path) -> None:
    path = tmp_path / ".gemini" / "settings.json"
    gemini.install(path, gemini.planned_hooks(URL, None))
    assert gemini.install(path, gemini.planned_hooks("http://127.0.0.1:9999", None, capture=False)) is True
    found = gemini.read_installed(path)
    assert found is not None
    assert set(found) == {"SessionStart", "BeforeAgent"}
    assert all("http://127.0.0.1:9999" in hooks[0]["command"] for hooks in found.values())


def test_uninstall_removes_the_file_and_folder_an_install_created(tmp_path: Path) -> None:
    path = gemini.settings_path("project", tmp_path)
    assert gemini.install(path, gemini.planned_hooks(URL, None)) is True
    assert gemini.uninstall(path) is True
    assert not (tmp_path / ".gemini").exists()


def test_a_settings_file_that_is_not_a_json_object_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    text = '{\n  // Gemini CLI allows comments here\n  "general": {}\n}\n'
    path = _write(tmp_path / "settings.json", text)
    with pytest.raises(gemini.SettingsFileError):
        gemini.install(path, gemini.planned_hooks(URL, None))
    assert path.read_text() == text


def test_memoria_hook_install_agent_gemini_writes_the_users_settings_and_uninstall_gives_them_back(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    original = json.dumps(EXISTING, indent=2) + "\n"
    path = _write(home / ".gemini" / "settings.json", original)
    env = {"HOME": str(home), "MEMORIA_CLIENT__URL": URL, "MEMORIA_CLIENT__API_KEY": "mem_not-in-any-file"}

    def memoria(*args: str) -> Result:
        return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)

    installed = memoria("hook", "install", "--agent", "gemini")
    assert installed.exit_code == 0, installed.output
    assert f"Gemini CLI: installed in {path}" in installed.output
    found = gemini.read_installed(path)
    assert found is not None and set(found) == set(gemini.EVENTS)
    assert "mem_not-in-any-file" not in path.read_text()
    again = memoria("hook", "install", "--agent", "gemini")
    assert "Gemini CLI: already installed" in again.output
    assert gemini.GEMINI.installed is not None
    assert gemini.GEMINI.installed(path.parent) == (path, list(gemini.EVENTS))

    removed = memoria("hook", "uninstall", "--agent", "gemini")
    assert removed.exit_code == 0, removed.output
    assert path.read_text() == original
