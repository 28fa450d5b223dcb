"""The flat hooks file writer Copilot CLI and Cursor share (`app.hooks.install_flat_hooks`), on a host
of its own: what neither host's tests pin — the install switches choosing the events, an event that
is not a list refused, no `version` added to a file that has none, and only the empty folders the host
names removed by an uninstall."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.hooks.agent_install import AgentConfigError
from app.hooks.install import is_memoria_command
from app.hooks.install_flat_hooks import FlatHooksHost
from app.hooks.install_hook_file import Scope

URL = "http://127.0.0.1:8080"


class ExampleConfigError(AgentConfigError):
    pass


def _path(scope: Scope, project_dir: Path, config_dir: Path | None) -> Path:
    return (config_dir or project_dir / ".example") / "hooks" / "memoria.json"


def _hook(url: str, namespace: str | None, sub: str) -> dict[str, Any]:
    return {"run": f"python3 -m memoria_hook_client.command {sub} --agent example", "url": url}


def _is_ours(entry: Any) -> bool:
    return isinstance(entry, dict) and is_memoria_command(str(entry.get("run", "")))


HOST = FlatHooksHost(
    agent="example",
    label="Example",
    executable="example",
    subcommands={"start": "session-start", "prompt": "user-prompt-submit", "end": "capture"},
    hooks_file=_path,
    make_hook=_hook,
    is_memoria_entry=_is_ours,
    created_folders=(("hooks",), (".example",)),
    error=ExampleConfigError,
)


def test_the_install_switches_choose_the_events_the_plan_covers() -> None:
    assert list(HOST.planned_hooks(URL, None)) == ["start", "prompt", "end"]
    assert list(HOST.planned_hooks(URL, None, recall=False)) == ["start", "end"]
    assert list(HOST.planned_hooks(URL, None, session_start=False, capture=False)) == ["prompt"]


def test_an_event_that_is_not_a_list_is_refused_and_the_file_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "memoria.json"
    path.write_text('{"hooks": {"prompt": "mine"}}')
    with pytest.raises(ExampleConfigError, match='"hooks.prompt" is not a list'):
        HOST.install(path, HOST.planned_hooks(URL, None))
    assert path.read_text() == '{"hooks": {"prompt": "mine"}}'


def test_a_file_without_a_version_gets_none_and_a_new_file_gets_the_formats(tmp_path: Path) -> None:
    original = '{"hooks": {"other": [{"run": "./mine.sh"}]}}\n'
    theirs = tmp_path / "theirs.json"
    theirs.write_text(original)
    assert HOST.install(theirs, HOST.planned_hooks(URL, None))
    assert "version" not in json.loads(theirs.read_text())
    assert HOST.uninstall(theirs)
    assert theirs.read_text() == original

    fresh = tmp_path / "fresh.json"
    assert HOST.install(fresh, HOST.planned_hooks(URL, None))
    assert json.loads(fresh.read_text())["version"] == 1


def test_an_uninstall_removes_only_the_empty_folders_the_host_names_from_the_file_upward(
    tmp_path: Path,
) -> None:
    project = tmp_path / "hooks"  # named like a folder the host creates, yet above the ones it names
    project.mkdir()
    path = _path("project", project, None)
    assert HOST.install(path, HOST.planned_hooks(URL, None))
    (project / ".example" / "settings.json").write_text("{}")
    assert HOST.uninstall(path)
    assert not path.parent.exists()
    assert (project / ".example" / "settings.json").exists()

    (project / ".example" / "settings.json").unlink()
    assert HOST.install(path, HOST.planned_hooks(URL, None))
    assert HOST.uninstall(path)
    assert list(project.iterdir()) == []
    assert project.exists()
