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
from app.hooks import install as hooks

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
    result = cli(home, "hook", "install", "--mode", "http", "--no-session-start", "--no-capture")
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


def test_install_into_a_missing_file_creates_it_and_uninstall_removes_it_again(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    cli(home, "hook", "install")
    assert len(memoria_hooks(read(path))) == 1
    result = cli(home, "hook", "uninstall")
    assert "it held nothing else, so it is gone" in result.output
    assert not path.exists()
    assert not (home / ".claude").exists(), "the directory the install created is gone too"


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
def test_install_without_capture_warns_when_the_key_can_do_more_than_read(home: Path, mode: str) -> None:
    body = {"user": "dev", "scopes": ["read", "write", "admin"]}
    with me_server(200, body) as (url, seen):
        result = cli(home, "hook", "install", "--mode", mode, "--url", url, "--no-capture")
    assert result.exit_code == 0, result.output
    assert seen == [f"Bearer {KEY}"]
    assert "can also admin, write; it only needs read" in result.output
    assert "memoria keys create --user dev --scope read" in result.output
    assert KEY not in (home / ".claude" / "settings.json").read_text()


def test_install_with_capture_wants_read_and_write_and_nothing_more(home: Path) -> None:
    with me_server(200, {"user": "dev", "scopes": ["read", "write", "admin"]}) as (url, _):
        broad = cli(home, "hook", "install", "--url", url)
    assert "can also admin; they only need read and write" in broad.output
    with me_server(200, {"user": "dev", "scopes": ["read"]}) as (url, _):
        read_only = cli(home, "hook", "install", "--url", url)
    assert "cannot write, so the server will refuse every capture" in read_only.output
    assert "--scope read --scope write" in read_only.output


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (200, {"user": "dev", "scopes": ["read", "write"]}),
        (404, {"title": "Not Found"}),
        (401, {"title": "no"}),
    ],
    ids=["read-write key", "server without /v1/me", "refused key"],
)
def test_install_is_quiet_about_a_fitting_key_or_one_it_cannot_check(
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


ALL_EVENTS = ["SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd"]


def ours_by_event(settings: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {
        event: [hook for group in groups for hook in group["hooks"] if hooks.is_memoria_hook(hook)]
        for event, groups in settings.get("hooks", {}).items()
        if any(hooks.is_memoria_hook(hook) for group in groups for hook in group["hooks"])
    }


def subcommand_of(hook: dict[str, Any]) -> str:
    argv = shlex.split(hook["command"])
    return argv[argv.index(str(hooks.SCRIPT)) + 1]


def test_one_install_puts_memorias_hook_on_every_event(home: Path) -> None:
    result = cli(home, "hook", "install")
    assert result.exit_code == 0, result.output
    ours = ours_by_event(read(home / ".claude" / "settings.json"))
    assert list(ours) == ALL_EVENTS
    assert {event: [subcommand_of(h) for h in entries] for event, entries in ours.items()} == {
        "SessionStart": ["session-start"],
        "UserPromptSubmit": ["user-prompt-submit"],
        "Stop": ["capture"],
        "PreCompact": ["capture"],
        "SessionEnd": ["capture"],
    }
    assert not any(hook.get("async") for (hook,) in ours.values()), "see the next test"
    assert all(hook["type"] == "command" for (hook,) in ours.values())
    for event in ALL_EVENTS:
        assert event in result.output


def test_stop_runs_async_only_on_request_because_claude_p_kills_it_and_skips_session_end(
    home: Path,
) -> None:
    path = home / ".claude" / "settings.json"
    cli(home, "hook", "install", "--async-stop")
    ours = ours_by_event(read(path))
    assert [event for event, (hook,) in ours.items() if hook.get("async")] == ["Stop"]
    result = cli(home, "hook", "install")
    assert "Stop              command\n" in result.output
    assert not any(hook.get("async") for (hook,) in ours_by_event(read(path)).values())


def test_http_mode_changes_only_the_prompt_hook(home: Path) -> None:
    cli(home, "hook", "install", "--mode", "http")
    ours = ours_by_event(read(home / ".claude" / "settings.json"))
    assert list(ours) == ALL_EVENTS
    assert [event for event, (hook,) in ours.items() if hook["type"] == "http"] == ["UserPromptSubmit"]


@pytest.mark.parametrize(
    ("switch", "left_out"),
    [
        ("--no-session-start", ["SessionStart"]),
        ("--no-recall", ["UserPromptSubmit"]),
        ("--no-capture", ["Stop", "PreCompact", "SessionEnd"]),
    ],
)
def test_each_hook_can_be_switched_off_and_a_later_install_takes_it_out(
    home: Path, switch: str, left_out: list[str]
) -> None:
    path = write(home / ".claude" / "settings.json", EXISTING)
    cli(home, "hook", "install")
    result = cli(home, "hook", "install", switch)
    assert result.exit_code == 0, result.output
    settings = read(path)
    assert set(ours_by_event(settings)) == set(ALL_EVENTS) - set(left_out)
    assert settings["hooks"]["PreToolUse"] == EXISTING["hooks"]["PreToolUse"]
    assert settings["hooks"]["UserPromptSubmit"][0] == EXISTING["hooks"]["UserPromptSubmit"][0]


def test_installing_with_every_hook_switched_off_is_refused(home: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["hook", "install", "--no-session-start", "--no-recall", "--no-capture"],
        env={"HOME": str(home)},
    )
    assert result.exit_code == 2 and "nothing to install" in result.output
    assert not (home / ".claude").exists()


def test_a_full_install_twice_leaves_the_file_untouched(home: Path) -> None:
    path = write(home / ".claude" / "settings.json", EXISTING)
    cli(home, "hook", "install", "--scope", "user")
    first = path.read_bytes()
    again = cli(home, "hook", "install", "--scope", "user")
    assert again.output.startswith("already installed")
    assert path.read_bytes() == first


USERS_OWN_COMMANDS = [
    "~/bin/my-memoria-hook-wrapper.sh",
    "bash ~/bin/memoria-hook-notify.sh user-prompt-submit",
    "python3 ~/tools/memoria-hook.py",
    "echo memoria hook user-prompt-submit >> ~/prompts.log",
    "python3 -c 'import memoria_hook'",
    "/usr/local/bin/memoria-hook-audit capture",
    "memoria recall --json deploy",
]
OUR_COMMANDS = [
    "/usr/bin/python3 -S /opt/memoria/scripts/memoria-hook user-prompt-submit",
    "/opt/memoria/.venv/bin/python3.11 -S /opt/memoria/scripts/memoria-hook session-start --url http://x:1",
    "'/home/me/My Code/memoria/.venv/bin/python' -S '/home/me/My Code/memoria/scripts/memoria-hook' capture",
    "python3 -S scripts/memoria-hook",
    "/opt/memoria/scripts/memoria-hook --namespace team",
    "python -m memoria_hook_client.command flush",
    "python -m app.hooks.command session-start",  # installed before the client was its own package
    "MEMORIA_CLIENT__URL=http://127.0.0.1:9 python3 -S /x/memoria-hook user-prompt-submit",
    "/home/me/.venv/bin/memoria hook user-prompt-submit --namespace team",
    "memoria hook capture",
]


@pytest.mark.parametrize("command", USERS_OWN_COMMANDS)
def test_a_users_command_that_merely_mentions_memoria_is_not_ours(command: str) -> None:
    assert not hooks.is_memoria_hook({"type": "command", "command": command})


@pytest.mark.parametrize("command", OUR_COMMANDS)
def test_our_launcher_in_any_install_location_is_ours(command: str) -> None:
    assert hooks.is_memoria_hook({"type": "command", "command": command})


@pytest.mark.parametrize(
    ("url", "ours"),
    [
        ("http://127.0.0.1:8080/v1/hooks/claude-code/user-prompt-submit", True),
        ("https://memoria.example.com/base/v1/hooks/claude-code/user-prompt-submit?namespace=a", False),
        ("http://10.0.0.5:8080/v1/hooks/claude-code/user-prompt-submit?namespace=repo%3Ashop", True),
        ("http://127.0.0.1:8080/v1/hooks/claude-code/session-start", True),
        ("http://127.0.0.1:8080/v1/hooks/claude-code/user-prompt-submit-audit", False),
        ("http://audit.local/log?next=/v1/hooks/claude-code/user-prompt-submit", False),
    ],
)
def test_an_http_hook_is_ours_only_when_its_path_is_exactly_one_of_our_routes(url: str, ours: bool) -> None:
    assert hooks.is_memoria_hook({"type": "http", "url": url}) is ours


def test_uninstall_keeps_the_users_own_hooks_that_mention_memoria(home: Path) -> None:
    own = {
        "hooks": {
            "UserPromptSubmit": [
                {"hooks": [{"type": "command", "command": command} for command in USERS_OWN_COMMANDS]}
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "~/bin/my-memoria-hook-wrapper.sh"}]}],
        }
    }
    path = write(home / ".claude" / "settings.json", own)
    before = path.read_text()
    cli(home, "hook", "install")
    assert cli(home, "hook", "uninstall").exit_code == 0
    assert path.read_text() == before


COMMITTED = """{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "permissions": {
    "allow": ["Bash(npm run test:*)", "Bash(git diff:*)"],
    "deny": ["Read(./.env)", "Read(./secrets/**)"]
  },
  "hooks": {
    "UserPromptSubmit": [{ "hooks": [{ "type": "command", "command": "./scripts/branch-name.sh" }] }],
    "Stop": [
      {
        "hooks": [{ "type": "command", "command": "npx prettier --check .", "timeout": 60 }]
      }
    ]
  },
  "env": { "NODE_ENV": "development" },
  "includeCoAuthoredBy": false
}
"""


@pytest.mark.parametrize("mode", ["command", "http"])
def test_project_install_then_uninstall_gives_a_committed_file_back_byte_for_byte(
    home: Path, tmp_path: Path, mode: str
) -> None:
    """A committed settings file written by hand (prettier style: inline arrays, spaces inside
    braces) must not pick up a formatting-only diff from an install and uninstall."""
    project = tmp_path / "shop-api"
    path = project / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(COMMITTED)
    args = ["--scope", "project", "--project-dir", str(project)]
    assert cli(home, "hook", "install", "--mode", mode, *args).exit_code == 0
    installed = read(path)
    assert set(ours_by_event(installed)) == set(ALL_EVENTS)
    assert installed["permissions"] == json.loads(COMMITTED)["permissions"]
    assert '"allow": ["Bash(npm run test:*)", "Bash(git diff:*)"]' in path.read_text(), "untouched text kept"
    assert cli(home, "hook", "uninstall", *args).exit_code == 0
    assert path.read_text() == COMMITTED


def test_install_into_a_fresh_project_then_uninstall_leaves_no_trace(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "fresh"
    (project / ".git").mkdir(parents=True)
    args = ["--scope", "project", "--project-dir", str(project)]
    cli(home, "hook", "install", *args)
    assert (project / ".claude" / "settings.json").exists()
    cli(home, "hook", "uninstall", *args)
    assert sorted(p.name for p in project.iterdir()) == [".git"]


def test_uninstall_keeps_a_claude_directory_that_holds_other_files(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "shop-api"
    (project / ".claude" / "commands").mkdir(parents=True)
    args = ["--scope", "local", "--project-dir", str(project)]
    cli(home, "hook", "install", *args)
    cli(home, "hook", "uninstall", *args)
    assert not (project / ".claude" / "settings.local.json").exists()
    assert (project / ".claude" / "commands").is_dir()


def test_http_mode_is_refused_without_the_key_variable_because_the_hook_cannot_read_the_key_file(
    home: Path,
) -> None:
    key_file = home / ".config" / "memoria" / "key"
    key_file.parent.mkdir(parents=True)
    key_file.write_text(KEY)
    key_file.chmod(0o600)
    result = CliRunner().invoke(
        main,
        ["hook", "install", "--mode", "http", "--url", "http://127.0.0.1:1"],
        env={"HOME": str(home), "MEMORIA_CLIENT__API_KEY": None},
    )
    assert result.exit_code == 1
    assert "--mode http needs MEMORIA_CLIENT__API_KEY" in result.output
    assert "cannot read the key file" in result.output
    assert not (home / ".claude").exists()


def test_http_install_says_what_the_user_will_see_when_the_server_is_down(home: Path) -> None:
    result = cli(home, "hook", "install", "--mode", "http")
    assert "connection error on every prompt" in result.output
    assert "from $MEMORIA_CLIENT__API_KEY only" in result.output


@pytest.mark.parametrize(
    ("url", "env", "warned"),
    [
        ("http://127.0.0.1:8080", {"HTTPS_PROXY": "http://proxy.corp:3128"}, "NO_PROXY does not name"),
        (
            "http://127.0.0.1:8080",
            {"http_proxy": "http://proxy.corp:3128", "no_proxy": "localhost"},
            "NO_PROXY",
        ),
        ("http://127.0.0.1:8080", {"HTTPS_PROXY": "http://p:3128", "NO_PROXY": "localhost,127.0.0.1"}, None),
        (
            "http://memoria.corp.example:8080",
            {"HTTPS_PROXY": "http://p:3128", "NO_PROXY": ".corp.example"},
            None,
        ),
        ("http://memoria.corp.example:8080", {"HTTPS_PROXY": "http://p:3128", "NO_PROXY": "*"}, None),
        ("http://192.168.1.20:8080", {}, "private-range address"),
        ("http://10.0.0.5:8080", {}, "private-range address"),
        ("http://127.0.0.1:8080", {}, None),
        ("https://memoria.example.com", {}, None),
    ],
)
def test_http_install_warns_about_proxies_and_private_addresses_claude_code_will_not_reach(
    url: str, env: dict[str, str], warned: str | None
) -> None:
    warnings = hooks.http_warnings(url, env)
    if warned is None:
        assert warnings == []
    else:
        assert len(warnings) == 1 and warned in warnings[0]


def test_http_install_prints_the_proxy_warning(home: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["hook", "install", "--mode", "http", "--url", "http://127.0.0.1:1"],
        env={
            "HOME": str(home),
            "MEMORIA_CLIENT__API_KEY": KEY,
            "HTTPS_PROXY": "http://p:3128",
            "NO_PROXY": "",
        },
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "warning: HTTPS_PROXY is set and NO_PROXY does not name 127.0.0.1" in result.output


@pytest.mark.parametrize("sub", ["user-prompt-submit", "session-start", "capture", "flush"])
def test_every_hook_subcommand_has_help(home: Path, monkeypatch: pytest.MonkeyPatch, sub: str) -> None:
    def exit_without_killing_pytest(code: int) -> None:  # the hook ends with os._exit
        raise SystemExit(code)

    monkeypatch.setattr(os, "_exit", exit_without_killing_pytest)
    result = cli(home, "hook", sub, "-h")
    assert result.exit_code == 0
    assert result.output.startswith(f"usage: memoria hook {sub}")


def test_a_project_install_from_a_subdirectory_goes_to_the_repository_root(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code reads a project's `.claude` at its root, and `memoria status` looks there too."""
    project = tmp_path / "shop-api"
    (project / ".git").mkdir(parents=True)
    (project / "src" / "api").mkdir(parents=True)
    monkeypatch.chdir(project / "src" / "api")
    assert cli(home, "hook", "install", "--scope", "local").exit_code == 0
    assert (project / ".claude" / "settings.local.json").exists()
    assert not (project / "src" / "api" / ".claude").exists()
