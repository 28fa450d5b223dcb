"""`memoria status` per coding agent: hooks, MCP registration, key check, spool, last outcomes, and
`--json`; and the waiting flusher, shown while it waits.

Each agent's config is written by the real installers (`memoria hook install --agent`,
`memoria mcp install --agent`) into a HOME of the test's own; the key check asks a stand-in
`GET /v1/me` on 127.0.0.1.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from app.cli import host_status, main
from app.cli.mcp import mcp_install
from app.core.net import free_port
from app.mcp import registrations
from memoria_hook_client import flush_wait, spool, state

GOOD_KEY = "mem_good"


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A home, a state directory and a git project to stand in, as the environment of the commands."""
    home = tmp_path / "home"
    project = tmp_path / "shop-api"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    monkeypatch.chdir(project)
    return {
        "HOME": str(home),
        "MEMORIA_CLIENT__STATE_DIR": str(tmp_path / "state"),
        "MEMORIA_CLIENT__KEY_FILE": str(tmp_path / "no-key-file"),
        "MEMORIA_CLIENT__API_KEY": GOOD_KEY,
        "MEMORIA_CLIENT__URL": f"http://127.0.0.1:{free_port()}",  # nobody listens
        "MEMORIA_CLIENT__FLUSH_WAIT_S": "0",
        "COLUMNS": "250",
    }


def memoria(env: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def lines(result: Result) -> list[str]:
    return [" ".join(line.split()) for line in result.output.splitlines()]


def agent_block(out: list[str], agent: str) -> list[str]:
    """The lines `memoria status` prints for one agent (its name line first)."""
    start = out.index("agents") + 1
    names = {"claude-code", "codex", "gemini", "qwen", *host_status.agent_names()}
    block: list[str] = []
    for line in out[start:]:
        first = line.split()[0]
        if block and first in names:
            break
        if block or first == agent:
            block.append(line)
    return block


class _Me(BaseHTTPRequestHandler):
    """A stand-in server: `GET /v1/me` answers 200 for GOOD_KEY, 401 for any other."""

    def do_GET(self) -> None:
        good = self.headers.get("Authorization") == f"Bearer {GOOD_KEY}"
        payload = json.dumps({"scopes": ["read"]} if good else {"title": "Unauthorized"}).encode()
        self.send_response(200 if good and self.path == "/v1/me" else 401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *_args: Any) -> None:
        pass


@contextmanager
def me_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Me)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_every_agent_of_the_registries_is_listed_with_its_hook_events_and_mcp_entry(
    machine: dict[str, str],
) -> None:
    assert memoria(machine, "hook", "install", "--agent", "codex").exit_code == 0
    assert memoria(machine, "mcp", "install", "--agent", "gemini").exit_code == 0

    out = lines(memoria(machine, "status"))

    home = machine["HOME"]
    codex = agent_block(out, "codex")
    assert codex[:3] == ["codex", "hooks SessionStart, UserPromptSubmit, Stop", "mcp none"]
    gemini = agent_block(out, "gemini")
    assert gemini[:3] == ["gemini", "hooks none", f"mcp user {home}/.gemini/settings.json"]
    assert agent_block(out, "claude-code") == ["claude-code nothing installed, nothing recorded"]
    listed = json.loads(memoria(machine, "status", "--json").output)["agents"]
    assert [agent["agent"] for agent in listed] == host_status.agent_names()
    assert {"claude-code", "codex", "gemini", "qwen"} <= set(host_status.agent_names())


def mcp_agents() -> list[str]:
    """The agents `memoria mcp install --agent` accepts."""
    option = next(param for param in mcp_install.params if param.name == "agent")
    assert isinstance(option.type, click.Choice)
    return [str(choice) for choice in option.type.choices if choice != "all"]


@pytest.mark.parametrize("agent", mcp_agents())
def test_an_mcp_install_for_any_agent_shows_in_its_status(machine: dict[str, str], agent: str) -> None:
    installed = memoria(machine, "mcp", "install", "--agent", agent, "--scope", "user")
    assert installed.exit_code == 0, installed.output

    listed = json.loads(memoria(machine, "status", "--json").output)["agents"]

    entry = next(item for item in listed if item["agent"] == agent)
    assert agent in registrations.READERS
    assert [mcp["scope"] for mcp in entry["mcp"]] == ["user"], entry


def test_the_key_check_tells_an_accepted_key_from_a_refused_one_and_a_server_that_is_down(
    machine: dict[str, str],
) -> None:
    assert memoria(machine, "hook", "install").exit_code == 0  # Claude Code's: the key file or variable
    with me_server() as url:
        up = {**machine, "MEMORIA_CLIENT__URL": url}
        accepted = agent_block(lines(memoria(up, "status")), "claude-code")
        refused = agent_block(
            lines(memoria({**up, "MEMORIA_CLIENT__API_KEY": "mem_bad"}, "status")), "claude-code"
        )
    down = agent_block(lines(memoria(machine, "status")), "claude-code")
    key = next(line for line in accepted if line.startswith("key "))
    assert key == f"key ok {url} accepts the key"
    assert (
        next(line for line in refused if line.startswith("key "))
        == f"key refused {url} refused the key (401)"
    )
    assert next(line for line in down if line.startswith("key ")).startswith(
        f"key unreachable cannot reach {machine['MEMORIA_CLIENT__URL']}"
    )


def test_the_key_check_of_a_server_that_never_answers_is_bounded(
    machine: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    monkeypatch.setattr(host_status, "KEY_CHECK_TIMEOUT_S", 0.5)
    monkeypatch.setenv("HOME", machine["HOME"])  # the report below runs in this process
    assert memoria(machine, "hook", "install").exit_code == 0
    with socket.socket() as hanging:  # accepts into the backlog, never answers
        hanging.bind(("127.0.0.1", 0))
        hanging.listen(16)
        url = f"http://127.0.0.1:{hanging.getsockname()[1]}"
        report = host_status.host_report(Path.cwd(), {**machine, "MEMORIA_CLIENT__URL": url}, url)
        started = time.monotonic()
        check = host_status.check_key(url, GOOD_KEY)
        assert time.monotonic() - started < 3
    assert check["outcome"] == "unreachable"
    assert report[0]["key"]["outcome"] == "unreachable"


def test_an_agent_that_reads_no_key_file_is_told_the_variable_is_missing(
    machine: dict[str, str], tmp_path: Path
) -> None:
    key_file = Path(machine["MEMORIA_CLIENT__KEY_FILE"])
    key_file.write_text(GOOD_KEY + "\n")
    key_file.chmod(0o600)
    without_variable = {k: v for k, v in machine.items() if k != "MEMORIA_CLIENT__API_KEY"}
    assert memoria(without_variable, "hook", "install").exit_code == 0
    assert memoria(without_variable, "mcp", "install", "--agent", "gemini").exit_code == 0
    with me_server() as url:
        out = lines(memoria({**without_variable, "MEMORIA_CLIENT__URL": url}, "status"))
    assert f"key ok {url} accepts the key" in agent_block(out, "claude-code"), "the hook reads the key file"
    assert "key no-key MEMORIA_CLIENT__API_KEY is not set, and this agent reads no key file" in agent_block(
        out, "gemini"
    )


def test_spooled_captures_and_the_last_outcomes_are_shown_per_agent(machine: dict[str, str]) -> None:
    url = machine["MEMORIA_CLIENT__URL"]
    spool.append(machine, "repo:shop-api", url, [{"turn": 0}, {"turn": 1}], agent="codex")
    spool.append(machine, "repo:shop-api", url, [{"turn": 0}])
    state.record(machine, "recall", "injected", "repo:shop-api", 3, agent="gemini")
    state.record(machine, "capture", "spooled", "repo:shop-api", 2, agent="codex")

    out = lines(memoria(machine, "status"))

    by_agent = state.spool_by_agent(machine, "claude-code")
    codex = agent_block(out, "codex")
    assert f"spooled 2 exchanges ({by_agent['codex']['bytes']} bytes) waiting" in codex
    assert any(line.startswith("last capture ") and "spooled count 2" in line for line in codex)
    assert "last recall never" in codex
    assert f"spooled 1 exchanges ({by_agent['claude-code']['bytes']} bytes) waiting" in agent_block(
        out, "claude-code"
    )
    gemini = agent_block(out, "gemini")
    assert any(
        line.startswith("last recall ") and "injected count 3 namespace repo:shop-api" in line
        for line in gemini
    )
    assert "spooled nothing" in gemini


def test_status_json_is_one_object_with_the_server_the_agents_and_the_local_state(
    machine: dict[str, str],
) -> None:
    spool.append(machine, "repo:shop-api", machine["MEMORIA_CLIENT__URL"], [{"turn": 0}])
    state.record(machine, "recall", "injected", None, 2, agent="claude-code")

    result = memoria(machine, "status", "--json")

    assert result.exit_code == 1, "the server is down"
    report = json.loads(result.output)
    assert set(report) == {"server", "agents", "spool", "flusher", "last"}
    assert report["server"]["ready"] is False and "cannot reach" in report["server"]["error"]
    assert (report["spool"]["exchanges"], report["spool"]["dir"]) == (1, machine["MEMORIA_CLIENT__STATE_DIR"])
    assert report["flusher"] is None
    assert report["last"]["recall"]["count"] == 2 and report["last"]["flush"] is None
    claude = report["agents"][0]
    assert claude["agent"] == "claude-code" and claude["last"]["recall"]["outcome"] == "injected"
    assert claude["spool"]["exchanges"] == 1


def test_status_says_a_flusher_is_waiting_for_the_server_while_it_waits(machine: dict[str, str]) -> None:
    spool.append(machine, "repo:shop-api", machine["MEMORIA_CLIENT__URL"], [{"turn": 0}])
    waiting_env = {**machine, "MEMORIA_CLIENT__FLUSH_WAIT_S": "600"}
    paused = threading.Event()
    release = threading.Event()

    def sleep(_seconds: float) -> None:
        paused.set()
        release.wait(20)
        for batch in spool.load(machine):  # the spool goes meanwhile: the waiter ends
            spool._remove_batch(machine, batch)

    waiter = threading.Thread(target=flush_wait.wait_and_flush, args=(waiting_env, [], sleep))
    waiter.start()
    try:
        assert paused.wait(20)
        out = lines(memoria(machine, "status"))
        report = json.loads(memoria(machine, "status", "--json").output)
    finally:
        release.set()
        waiter.join(20)
    line = next(line for line in out if line.startswith("flusher "))
    assert line.startswith("flusher waiting for the server since ")
    assert line.endswith("attempts 1 last unreachable")
    assert report["flusher"]["attempts"] == 1
    assert not any(line.startswith("flusher ") for line in lines(memoria(machine, "status")))
