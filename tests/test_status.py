"""`memoria status` beyond the server: this machine's Claude Code hooks per settings scope, the
capture spool and the last capture / recall / session-start, shown when the server is down too."""

from __future__ import annotations

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from app.cli import main
from app.core.net import free_port
from memoria_hook_client import spool, state
from memoria_hook_client.capture_worker import run_flush


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A home, a state directory and a git project to stand in, as the environment of the commands."""
    home = tmp_path / "home"
    project = tmp_path / "shop-api"
    (project / ".git").mkdir(parents=True)
    (project / "src").mkdir()
    home.mkdir()
    monkeypatch.chdir(project / "src")
    return {
        "HOME": str(home),
        "MEMORIA_CLIENT__STATE_DIR": str(tmp_path / "state"),
        "MEMORIA_CLIENT__API_KEY": "mem_test",
        "MEMORIA_CLIENT__URL": f"http://127.0.0.1:{free_port()}",  # nobody listens
        "COLUMNS": "250",
        "MEMORIA_CLIENT__FLUSH_WAIT_S": "0",  # a failed flush here starts no waiting flusher
    }


def memoria(env: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def lines(result: Result) -> list[str]:
    return [" ".join(line.split()) for line in result.output.splitlines()]


def test_with_the_server_down_status_says_so_and_still_shows_the_local_state(machine: dict[str, str]) -> None:
    project = Path.cwd().parent
    assert memoria(machine, "hook", "install", "--async-stop").exit_code == 0
    assert (
        memoria(machine, "hook", "install", "--scope", "local", "--no-capture", "--mode", "http").exit_code
        == 0
    )
    spool.append(machine, "repo:shop-api", machine["MEMORIA_CLIENT__URL"], [{"turn": 0}, {"turn": 1}])
    state.record(machine, "capture", "spooled", "repo:shop-api", 2)
    state.record(machine, "recall", "injected", "repo:shop-api", 3)

    result = memoria(machine, "status")

    assert result.exit_code == 1
    out = lines(result)
    assert (
        out[0]
        == f"server {machine['MEMORIA_CLIENT__URL']} cannot reach Memoria at {machine['MEMORIA_CLIENT__URL']}"
        + (" (is `memoria serve` running?)")
    )
    home = machine["HOME"]
    assert f"user {home}/.claude/settings.json" in out
    assert f"project none {project}/.claude/settings.json" in out, "the git root's, not the cwd's"
    assert f"local {project}/.claude/settings.local.json" in out
    assert out.count("Stop command, async") == 1
    assert out.count("UserPromptSubmit command") == 1 and out.count("UserPromptSubmit http") == 1
    assert out.count("SessionStart command") == 2
    spool_line = next(line for line in out if line.startswith("spool "))
    assert "2 exchanges in 1 batches" in spool_line and machine["MEMORIA_CLIENT__STATE_DIR"] in spool_line
    capture = next(line for line in out if line.startswith("last capture "))
    assert "spooled count 2 namespace repo:shop-api" in capture
    assert any(line.startswith("last recall ") and "injected count 3" in line for line in out)
    assert "last session never" in out and "last flush never" in out


def test_status_counts_the_prompts_left_without_context_per_reason(machine: dict[str, str]) -> None:
    for reason in ("floor", "trivial", "floor", "budget"):
        state.record(machine, "recall", "below-floor", "repo:shop-api", 0, tally=reason)
    out = lines(memoria(machine, "status"))
    recall = out.index(next(line for line in out if line.startswith("last recall ")))
    assert out[recall + 1] == "no context budget 1, floor 2, trivial 1"


def test_nothing_installed_and_nothing_recorded_reads_as_such(machine: dict[str, str]) -> None:
    out = lines(memoria(machine, "status"))
    assert [line.split()[:2] for line in out if line.split()[0] in ("user", "project", "local")] == [
        ["user", "none"],
        ["project", "none"],
        ["local", "none"],
    ] * 2, "no hooks, then no MCP server"
    assert any(line.startswith("spool empty") for line in out)
    assert {line for line in out if line.startswith("last ")} == {
        "last capture never",
        "last flush never",
        "last recall never",
        "last session never",
    }


def test_status_shows_the_mcp_registration_and_whether_claude_code_would_send_a_key(
    machine: dict[str, str],
) -> None:
    project = Path.cwd().parent
    at_root = ("--project-dir", str(project))
    assert memoria(machine, "mcp", "install", "--scope", "local", "--allow-tools", *at_root).exit_code == 0
    assert memoria(machine, "mcp", "install", "--scope", "project", *at_root).exit_code == 0

    out = lines(memoria(machine, "status"))
    at = out.index("mcp")
    home, url = machine["HOME"], machine["MEMORIA_CLIENT__URL"]
    assert out[at + 1] == f"user none {home}/.claude.json"
    assert out[at + 2] == (
        f"project {project}/.mcp.json {url}/mcp namespace repo:shop-api key $MEMORIA_CLIENT__API_KEY "
        "tools allowed"  # by the local install's rule: both are read from .claude/settings.local.json
    )
    assert out[at + 3] == "key reachable"
    assert out[at + 4] == (
        f"local {home}/.claude.json (this project) {url}/mcp namespace repo:shop-api key helper tools allowed"
    )
    assert out[at + 5] == "key reachable"

    without_key = {k: v for k, v in machine.items() if k != "MEMORIA_CLIENT__API_KEY"}
    out = lines(memoria(without_key, "status"))
    at = out.index("mcp")
    assert out[at + 3].startswith("unreachable no API key: set MEMORIA_CLIENT__API_KEY or store one in")
    assert out[at + 5].startswith("unreachable no API key")


def test_a_settings_file_that_is_not_json_is_named_not_fatal(machine: dict[str, str]) -> None:
    settings = Path(machine["HOME"]) / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": ')
    out = lines(memoria(machine, "status"))
    assert f"user unreadable {settings}" in out
    assert any(line.startswith("spool ") for line in out)


class _Ready(BaseHTTPRequestHandler):
    """A stand-in server: ready, one namespace."""

    def do_GET(self) -> None:
        body: Any = (
            {"status": "ready"} if self.path == "/readyz" else [{"name": "repo:shop-api", "memories": 7}]
        )
        payload = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *_args: Any) -> None:
        pass


def test_with_the_server_up_the_local_state_follows_the_server_part(machine: dict[str, str]) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ready)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        env = {**machine, "MEMORIA_CLIENT__URL": f"http://127.0.0.1:{server.server_address[1]}"}
        state.record(env, "session-start", "injected", None, 4)
        result = memoria(env, "status")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
    assert result.exit_code == 0, result.output
    out = lines(result)
    assert out[0] == f"server {env['MEMORIA_CLIENT__URL']} ready"
    assert out.index("hooks") > out.index("key ok 1 namespaces, 7 memories")
    assert any(
        line.startswith("last session ") and "injected count 4 namespace server default" in line
        for line in out
    )


class _Capture(BaseHTTPRequestHandler):
    """A stand-in capture route: every exchange sent is answered as the server's skip rules and
    folding would count them."""

    def do_POST(self) -> None:
        sent = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["exchanges"]
        body = {
            "stored": 1,
            "duplicates": 0,
            "folded": 2,
            "skipped": len(sent) - 3,
            "skipped_reasons": {"greeting": len(sent) - 4, "api-error": 1},
            "results": [],
        }
        payload = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *_args: Any) -> None:
        pass


def test_status_shows_what_the_server_skipped_per_reason_and_folded_in_the_last_flush(
    machine: dict[str, str],
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Capture)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        env = {**machine, "MEMORIA_CLIENT__URL": url}
        exchanges = [
            {"session_id": "s", "turn": turn, "prompt": "hi", "reply": "Hello!"} for turn in range(7)
        ]
        spool.append(env, "repo:shop-api", url, exchanges)
        result = run_flush(env, 5.0, [])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
    assert (result["outcome"], result["folded"], result["skipped"]) == (
        "flushed",
        2,
        {"greeting": 3, "api-error": 1},
    )
    out = lines(memoria(machine, "status"))
    flush = out.index(next(line for line in out if line.startswith("last flush ")))
    assert "flushed count 7" in out[flush]
    assert out[flush + 1 : flush + 3] == [
        "skipped api-error 1, greeting 3",
        "folded 2 repeats into earlier episodes",
    ]


def test_a_flush_that_found_the_spool_already_sent_leaves_the_last_flush_line_alone(
    machine: dict[str, str],
) -> None:
    state.record(machine, "flush", "flushed", "repo:shop-api", 4)  # the flush that sent
    spool.append(machine, "repo:shop-api", machine["MEMORIA_CLIENT__URL"], [{"turn": 0}])
    # another flusher holds the lock while this one waits for it, and sends the spool meanwhile
    held = state.lock_file(os.path.join(state.state_dir(machine), spool.FLUSH_LOCK), 1.0)
    assert held is not None
    outcome: dict[str, Any] = {}
    waiting = threading.Thread(target=lambda: outcome.update(run_flush(machine, 5.0, [])))
    waiting.start()
    time.sleep(0.2)
    for batch in spool.load(machine):
        spool._remove_batch(machine, batch)
    state.unlock_file(held)
    waiting.join(10)

    assert outcome["outcome"] == "empty" and outcome["sent"] == 0
    assert state.read_status(machine)["flush"]["count"] == 4
    assert any(
        line.startswith("last flush") and "flushed count 4" in line
        for line in lines(memoria(machine, "status"))
    )


def test_a_flush_that_sent_nothing_is_shown_under_the_last_one_that_sent_never_in_its_place(
    machine: dict[str, str],
) -> None:
    state.record(machine, "flush", "flushed", None, 4)  # the flush that sent
    spool.append(machine, "repo:shop-api", machine["MEMORIA_CLIENT__URL"], [{"turn": 0}])

    assert run_flush(machine, 5.0, [])["outcome"] == "unreachable"  # nobody listens

    assert state.read_status(machine)["flush"]["count"] == 4
    out = lines(memoria(machine, "status"))
    flush = out.index(next(line for line in out if line.startswith("last flush ")))
    assert "flushed count 4" in out[flush]
    assert out[flush + 1].startswith("then ") and out[flush + 1].endswith("unreachable, sent nothing, 1 left")
