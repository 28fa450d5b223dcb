"""`memoria hook install|uninstall` on Claude Code settings files that already hold other things."""

from __future__ import annotations

import copy
import json
import os
import shlex
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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
    result = cli(home, "hook", "install", "--mode", "http")
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


def test_the_default_install_is_the_command_hook_that_stays_silent_when_the_server_is_down(
    home: Path,
) -> None:
    cli(home, "hook", "install")
    (group,) = json.loads((home / ".claude" / "settings.json").read_text())["hooks"]["UserPromptSubmit"]
    (hook,) = group["hooks"]
    assert hook["type"] == "command" and "memoria-hook" in hook["command"]


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


def test_project_http_install_names_the_projects_namespace_in_the_url(home: Path, tmp_path: Path) -> None:
    """Claude Code posts the event as it is, so the namespace is computed here, at install time, from
    the project's git root, and travels in the URL: the server never resolves the client's cwd."""
    project = tmp_path / "Shop API"
    (project / ".git").mkdir(parents=True)
    result = cli(
        home, "hook", "install", "--scope", "project", "--mode", "http", "--project-dir", str(project)
    )
    assert result.exit_code == 0, result.output
    (ours,) = memoria_hooks(read(project / ".claude" / "settings.json"))
    assert (
        ours["url"]
        == "http://127.0.0.1:8080/v1/hooks/claude-code/user-prompt-submit?namespace=repo%3AShop-API"
    )
    assert "repo:Shop-API" in result.output


def test_project_http_install_follows_the_clients_namespace_map(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "mono" / "services" / "api"
    project.mkdir(parents=True)
    env = {"MEMORIA_CLIENT__NAMESPACE_MAP": json.dumps({str(tmp_path / "mono"): "team-platform"})}
    result = CliRunner().invoke(
        main,
        ["hook", "install", "--scope", "local", "--mode", "http", "--project-dir", str(project)],
        env={"HOME": str(home), "MEMORIA_CLIENT__API_KEY": KEY, **env},
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    (ours,) = memoria_hooks(read(project / ".claude" / "settings.local.json"))
    assert ours["url"].endswith("/user-prompt-submit?namespace=team-platform")


def test_user_http_install_names_no_namespace_and_says_the_server_default_applies(home: Path) -> None:
    result = cli(home, "hook", "install", "--scope", "user", "--mode", "http")
    (ours,) = memoria_hooks(read(home / ".claude" / "settings.json"))
    assert "?" not in ours["url"]
    assert "server's default" in result.output


def test_command_install_leaves_the_namespace_to_each_prompt(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "shop-api"
    (project / ".git").mkdir(parents=True)
    cli(home, "hook", "install", "--scope", "project", "--mode", "command", "--project-dir", str(project))
    (ours,) = memoria_hooks(read(project / ".claude" / "settings.json"))
    assert "--namespace" not in shlex.split(ours["command"])


@contextmanager
def me_server(status: int, body: dict[str, Any]) -> Iterator[tuple[str, list[str]]]:
    """A stand-in Memoria answering `GET /v1/me` with `status` and `body`; yields (url, keys seen)."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.headers.get("Authorization", ""))
            payload = json.dumps(body).encode() if self.path == "/v1/me" else b"{}"
            self.send_response(status if self.path == "/v1/me" else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *_args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.mark.parametrize("mode", ["http", "command"])
def test_install_warns_when_the_hooks_key_can_do_more_than_read(home: Path, mode: str) -> None:
    body = {"user": "dev", "scopes": ["read", "write", "admin"]}
    with me_server(200, body) as (url, seen):
        result = cli(home, "hook", "install", "--mode", mode, "--url", url)
    assert result.exit_code == 0, result.output
    assert seen == [f"Bearer {KEY}"]
    assert "can also admin, write; it only needs read" in result.output
    assert "memoria keys create --user dev --scope read" in result.output
    assert KEY not in (home / ".claude" / "settings.json").read_text()


@pytest.mark.parametrize(
    ("status", "body"),
    [(200, {"user": "dev", "scopes": ["read"]}), (404, {"title": "Not Found"}), (401, {"title": "no"})],
    ids=["read-only key", "server without /v1/me", "refused key"],
)
def test_install_is_quiet_about_a_read_only_key_or_one_it_cannot_check(
    home: Path, status: int, body: dict[str, Any]
) -> None:
    with me_server(status, body) as (url, seen):
        result = cli(home, "hook", "install", "--url", url)
    assert result.exit_code == 0, result.output
    assert len(seen) == 1 and "warning" not in result.output


def test_install_without_a_key_or_a_server_checks_nothing_and_still_installs(home: Path) -> None:
    env = {"HOME": str(home), "MEMORIA_CLIENT__URL": "http://127.0.0.1:1"}
    result = CliRunner().invoke(main, ["hook", "install"], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert len(memoria_hooks(read(home / ".claude" / "settings.json"))) == 1
    assert "warning" not in result.output
