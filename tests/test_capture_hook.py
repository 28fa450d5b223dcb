"""The capture hook (`memoria-hook capture` on Stop, PreCompact, SessionEnd) from event to server.

Most tests call `memoria_hook_client.capture_worker.main` in-process against the capture stub of
`test_spool` (it keeps each session turn once, like the route's capture key) with a copy of a
transcript fixture, growing the copy the way Claude Code appends to it. One test runs the real
launcher as Claude Code would, with the detached flusher; the last ones run against a real
`memoria serve` and its PostgreSQL, through the real capture route.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from click.testing import CliRunner

from app.cli.capture_commands import capture as capture_cli
from app.core.net import free_port
from memoria_bench.serve import served_api
from memoria_hook_client import state
from memoria_hook_client.capture_worker import CURSOR_MAX_AGE_S, main
from memoria_hook_client.spool import load
from tests.fakes.apps import headers_for
from tests.test_spool import Stub

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
TOOLS = FIXTURES / "session-tools-compact.jsonl"
REAL = FIXTURES / "real-claude-p.jsonl"
SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "memoria-hook"
SID = "5f0c2a8e-3b1d-4e7a-9c62-0d4b8e1f7a93"
#: The fixture up to (not including) the interrupted fourth prompt: three finished turns.
THREE_TURNS = TOOLS.read_bytes()[: TOOLS.read_bytes().index(b"Also bump the version")]
THREE_TURNS = THREE_TURNS[: THREE_TURNS.rfind(b"\n") + 1]


@pytest.fixture
def stub() -> Iterator[Stub]:
    server = Stub()
    thread = threading.Thread(target=server.server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.server.shutdown()
    server.server.server_close()
    thread.join(timeout=5)


class Session:
    """A project directory (a git repository), a transcript Claude Code appends to, and the env."""

    def __init__(self, tmp_path: Path, url: str) -> None:
        self.repo = tmp_path / "shop-api"
        (self.repo / ".git").mkdir(parents=True)
        self.transcript = tmp_path / "projects" / f"{SID}.jsonl"
        self.transcript.parent.mkdir()
        self.transcript.write_bytes(b"")
        self.env = {
            "MEMORIA_CLIENT__STATE_DIR": str(tmp_path / "state"),
            "MEMORIA_CLIENT__HOOK_LOG": str(tmp_path / "hook.log"),
            "MEMORIA_CLIENT__API_KEY": "mem_test_key",
            "MEMORIA_CLIENT__URL": url,
            "MEMORIA_CLIENT__CAPTURE_FLUSH": "inline",
            "MEMORIA_CLIENT__HOOK_BUDGET_S": "10",
            # no waiting flusher (tests/test_flush_wait.py): these tests send the spool themselves
            "MEMORIA_CLIENT__FLUSH_WAIT_S": "0",
        }
        self.log = tmp_path / "hook.log"

    def append(self, data: bytes) -> None:
        with self.transcript.open("ab") as out:
            out.write(data)

    def event(self, name: str = "Stop", **extra: Any) -> bytes:
        event = {
            "session_id": SID,
            "transcript_path": str(self.transcript),
            "cwd": str(self.repo),
            "hook_event_name": name,
            **extra,
        }
        return json.dumps(event).encode()

    def hook(self, name: str = "Stop", *args: str, env: dict[str, str] | None = None) -> str:
        """Run the hook in-process; returns what it printed (it must print nothing)."""
        out = io.StringIO()
        assert main(["capture", *args], io.BytesIO(self.event(name)), out, env or self.env) == 0
        return out.getvalue()

    def log_text(self) -> str:
        return self.log.read_text() if self.log.exists() else ""


@pytest.fixture
def session(tmp_path: Path, stub: Stub) -> Session:
    return Session(tmp_path, stub.url)


def test_stop_sends_the_finished_exchanges_to_the_projects_namespace(session: Session, stub: Stub) -> None:
    session.append(THREE_TURNS)
    assert session.hook("Stop") == ""
    (path, headers, exchanges) = stub.requests[0]
    assert path == "/v1/capture/claude-code?namespace=repo%3Ashop-api"
    assert headers["Authorization"] == "Bearer mem_test_key"
    assert [(e["turn"], e["hook_event"]) for e in exchanges] == [(0, "Stop"), (1, "Stop"), (2, "Stop")]
    assert exchanges[1]["digest"]["errors"] == ["FAILED tests/test_retry.py::test_attempts - assert 3 == 5"]
    assert load(session.env) == []
    status = state.read_status(session.env)
    assert {k: status["capture"][k] for k in ("outcome", "namespace", "count")} == {
        "outcome": "spooled",
        "namespace": "repo:shop-api",
        "count": 3,
    }
    assert status["flush"]["outcome"] == "flushed"
    assert status["agents"]["claude-code"]["capture"] == status["capture"], "recorded as the agent's own"


def test_private_spans_never_reach_the_spool_or_the_server(session: Session, stub: Stub) -> None:
    session.env["MEMORIA_CLIENT__URL"] = f"http://127.0.0.1:{free_port()}"  # keep it in the spool
    session.append(THREE_TURNS)
    session.hook("Stop")
    spooled = Path(state.spool_path(session.env)).read_text()
    assert "hunter2" not in spooled
    assert "Raise the attempts to five and run the tests." in spooled


def test_the_same_event_again_sends_nothing_new(session: Session, stub: Stub) -> None:
    session.append(THREE_TURNS)
    session.hook("Stop")
    session.hook("Stop")
    session.hook("PreCompact")
    assert len(stub.requests) == 1
    assert state.read_status(session.env)["capture"]["outcome"] == "nothing-new"


def test_turns_appended_later_go_out_with_their_own_turn_index(session: Session, stub: Stub) -> None:
    data = REAL.read_bytes()
    second_prompt = data.index(b"This is the second prompt")
    cut = data.rfind(b"\n", 0, second_prompt) + 1
    session.append(data[:cut])
    session.hook("Stop")
    session.append(data[cut:])
    session.hook("Stop")
    assert [[e["turn"] for e in exchanges] for _, _, exchanges in stub.requests] == [[0], [1, 2]]
    assert (
        stub.requests[1][2][0]["prompt"]
        == "This is the second prompt: change hello to hello world in notes.txt"
    )


def test_an_unanswered_prompt_waits_and_session_end_stores_it(session: Session, stub: Stub) -> None:
    session.append(TOOLS.read_bytes())
    session.hook("Stop")
    assert stub.turns == [0, 1, 2]
    session.hook("SessionEnd")
    assert stub.turns == [0, 1, 2, 3]
    assert stub.kept[(SID, 3)]["hook_event"] == "SessionEnd"
    assert stub.kept[(SID, 3)]["reply"] == "[Request interrupted by user for tool use]", "why the turn ended"


def test_session_end_removes_cursors_of_sessions_untouched_for_months(session: Session, stub: Stub) -> None:
    cursors = Path(state.state_dir(session.env)) / state.CURSORS_DIR
    cursors.mkdir(parents=True)
    old, recent = cursors / "old-session.json", cursors / "recent-session.json"
    for path in (old, recent):
        path.write_text("{}")
    long_ago = time.time() - CURSOR_MAX_AGE_S - 3600
    os.utime(old, (long_ago, long_ago))
    session.append(THREE_TURNS)
    session.hook("Stop")
    assert old.exists()
    session.hook("SessionEnd")
    assert not old.exists() and recent.exists()
    assert Path(state.cursor_path(session.env, SID)).exists()


def test_a_stopped_server_loses_nothing_and_the_next_run_sends_it(session: Session, stub: Stub) -> None:
    session.env["MEMORIA_CLIENT__URL"] = f"http://127.0.0.1:{free_port()}"
    session.append(THREE_TURNS)
    assert session.hook("Stop") == ""
    assert state.spool_summary(session.env)["exchanges"] == 3
    status = state.read_status(session.env)
    assert status["flush-attempt"]["outcome"] == "unreachable" and "flush" not in status, "nothing sent"
    assert "unreachable" in session.log_text()
    # the server is back (its URL is the stub's): a run with nothing new still flushes the spool
    for batch in (spooled := load(session.env)):
        batch["url"] = stub.url
    state.write_json_atomic(state.spool_path(session.env), spooled)
    session.env["MEMORIA_CLIENT__URL"] = stub.url
    session.hook("Stop")
    assert stub.turns == [0, 1, 2] and load(session.env) == []


@pytest.mark.parametrize("how", ["env", "git-root", "cwd"])
def test_capture_can_be_turned_off_per_project_or_by_environment(
    session: Session, stub: Stub, how: str
) -> None:
    session.append(THREE_TURNS)
    env = dict(session.env)
    if how == "env":
        env["MEMORIA_CLIENT__CAPTURE"] = "off"
    elif how == "git-root":
        (session.repo / ".memoria-no-capture").write_text("")
        sub = session.repo / "src"
        sub.mkdir()
        session.repo = sub  # the session runs in a subdirectory of the repository
    else:
        plain = session.repo.parent / "notes"
        plain.mkdir()
        (plain / ".memoria-no-capture").write_text("")
        session.repo = plain
    assert session.hook("Stop", env=env) == ""
    assert stub.requests == [] and load(env) == []
    assert state.read_status(env)["capture"]["outcome"] == "off"
    assert "capture off" in session.log_text()
    assert not os.path.exists(state.cursor_path(env, SID))


def test_the_namespace_option_overrides_the_projects_namespace(session: Session, stub: Stub) -> None:
    session.append(THREE_TURNS)
    session.hook("Stop", "--namespace", "team:notes")
    assert stub.requests[0][0] == "/v1/capture/claude-code?namespace=team%3Anotes"


@pytest.mark.parametrize(
    "stdin",
    [
        b"",
        b"not json",
        b"[]",
        b'{"session_id": "x"}',
        b'{"session_id": "x", "transcript_path": "/nonexistent/t.jsonl"}',
    ],
)
def test_bad_events_exit_0_print_nothing_and_say_why_in_the_log(session: Session, stdin: bytes) -> None:
    out = io.StringIO()
    assert main(["capture"], io.BytesIO(stdin), out, session.env) == 0
    assert out.getvalue() == ""
    assert session.log_text().strip()
    assert state.read_status(session.env)["capture"]["outcome"] == "failed"


def test_a_session_being_captured_by_another_run_is_left_to_it(session: Session, stub: Stub) -> None:
    session.append(THREE_TURNS)
    cursor = state.cursor_path(session.env, SID)
    held = state.lock_file(cursor[: -len(".json")] + ".lock", 1)
    assert held is not None
    try:
        session.hook("Stop")
    finally:
        state.unlock_file(held)
    assert stub.requests == [] and "being captured by another run" in session.log_text()
    session.hook("Stop")
    assert stub.turns == [0, 1, 2]


def test_the_launcher_returns_at_once_and_its_detached_worker_spools_and_delivers(
    session: Session, stub: Stub
) -> None:
    session.append(THREE_TURNS)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIA_")}
    env |= {k: v for k, v in session.env.items() if k != "MEMORIA_CLIENT__CAPTURE_FLUSH"}
    done = subprocess.run(
        [sys.executable, "-S", str(SCRIPT), "capture"],
        input=session.event("Stop"),
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    deadline = time.monotonic() + 30
    while len(stub.kept) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sorted(turn for _, turn in stub.kept) == [0, 1, 2]
    while load(session.env) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert load(session.env) == []
    # the worker, not the hook, read the transcript: it recorded the capture and moved the cursor
    assert state.read_status(session.env)["capture"]["count"] == 3
    cursor = json.loads(Path(state.cursor_path(session.env, SID)).read_text())
    assert cursor["turn"] == 3


def test_capture_off_and_on_write_and_remove_the_marker_at_the_git_root(
    session: Session, stub: Stub, monkeypatch: pytest.MonkeyPatch
) -> None:
    sub = session.repo / "src"
    sub.mkdir()
    monkeypatch.delenv("MEMORIA_CLIENT__CAPTURE", raising=False)
    runner = CliRunner()
    done = runner.invoke(capture_cli, ["off", "--project-dir", str(sub)])
    assert done.exit_code == 0, done.output
    marker = session.repo / ".memoria-no-capture"
    assert marker.exists() and str(marker) in done.output
    session.append(THREE_TURNS)
    session.repo = sub
    session.hook("Stop")
    assert stub.requests == []
    again = runner.invoke(capture_cli, ["off", "--project-dir", str(sub)])
    assert "already off" in again.output
    done = runner.invoke(capture_cli, ["on", "--project-dir", str(sub)])
    assert done.exit_code == 0 and not marker.exists()
    assert f"removed {marker}" in done.output
    session.hook("Stop")
    assert stub.turns == [0, 1, 2]
    assert "not turned off" in runner.invoke(capture_cli, ["on", "--project-dir", str(sub)]).output


def test_capture_flush_sends_the_spool_and_says_what_happened(
    session: Session, stub: Stub, monkeypatch: pytest.MonkeyPatch
) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    session.env["MEMORIA_CLIENT__URL"] = dead
    session.append(THREE_TURNS)
    session.hook("Stop")
    for name, value in session.env.items():
        monkeypatch.setenv(name, value)
    runner = CliRunner()
    failed = runner.invoke(capture_cli, ["flush"])
    assert failed.exit_code == 1
    assert "3 left in the spool (unreachable)" in failed.output
    spooled = load(session.env)
    for batch in spooled:
        batch["url"] = stub.url
    state.write_json_atomic(state.spool_path(session.env), spooled)
    done = runner.invoke(capture_cli, ["flush"])
    assert done.exit_code == 0, done.output
    assert "Sent 3 exchanges (3 stored, 0 already there), dropped 0; 0 left" in done.output
    assert "Nothing to send" in runner.invoke(capture_cli, ["flush"]).output


GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def _turn(prompt: str, reply: str, stamp: str) -> bytes:
    base = {"isSidechain": False, "sessionId": SID, "cwd": "/home/dev/demo-project", "gitBranch": "master"}
    entries = [
        {
            **base,
            "type": "user",
            "message": {"role": "user", "content": prompt},
            "uuid": "p",
            "timestamp": stamp,
        },
        {
            **base,
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": reply}],
                "stop_reason": "end_turn",
            },
            "uuid": "r",
            "timestamp": stamp,
        },
    ]
    return b"".join(json.dumps(entry).encode() + b"\n" for entry in entries)


async def test_a_real_server_stores_each_exchange_once_as_an_episode_without_secrets(
    tmp_path: Path, db_url: str
) -> None:
    key = (await headers_for(db_url, "alice"))["Authorization"].removeprefix("Bearer ")
    env = {"MEMORIA_DATABASE__URL": db_url}
    async with served_api(env, "--no-migrate", unset=["MEMORIA_DATABASE__READ_URL"]) as api:
        session = Session(tmp_path, api.base)
        session.env["MEMORIA_CLIENT__API_KEY"] = key
        session.append(REAL.read_bytes())
        session.append(
            _turn(
                f"Push with {GITHUB_TOKEN} please <private>door code 4321</private>",
                "Pushed the branch.",
                "2026-11-24T13:01:00.000Z",
            )
        )
        await asyncio.to_thread(session.hook, "Stop")
        assert state.read_status(session.env)["flush"]["outcome"] == "flushed", (
            session.log_text() + "\n".join(api.tail)
        )
        # a crash before the cursor was written: the same turns are read and sent again
        os.unlink(state.cursor_path(session.env, SID))
        await asyncio.to_thread(session.hook, "SessionEnd")
        assert state.read_status(session.env)["flush"]["outcome"] == "flushed", (
            session.log_text() + "\n".join(api.tail)
        )
        assert load(session.env) == []
    conn = await asyncpg.connect(db_url)
    try:
        rows = await conn.fetch(
            "SELECT m.capture_key, m.kind, m.source, m.content, m.created_at, m.expires_at, m.metadata,"
            " n.name FROM memories m JOIN namespaces n ON n.id = m.namespace_id"
            " WHERE m.capture_key LIKE 'claude-code:%' ORDER BY m.capture_key"
        )
    finally:
        await conn.close()
    assert [row["capture_key"] for row in rows] == [f"claude-code:{SID}:{turn}:0" for turn in range(4)]
    assert {(row["kind"], row["source"], row["name"]) for row in rows} == {
        ("episode", "claude-code", "repo:shop-api")
    }
    assert all(row["expires_at"] is not None for row in rows)
    assert "List the files here" in rows[0]["content"]
    metadata = json.loads(rows[0]["metadata"])
    assert (metadata["session_id"], metadata["turn"], metadata["git_branch"]) == (SID, 0, "master")
    assert rows[0]["created_at"] == datetime(2026, 11, 24, 13, 0, 53, 501000, tzinfo=UTC)
    assert GITHUB_TOKEN not in rows[3]["content"] and "4321" not in rows[3]["content"]
    assert "Pushed the branch." in rows[3]["content"]


def test_the_capture_hook_loads_only_light_standard_library_modules() -> None:
    """What import-linter cannot see: which standard-library modules are loaded at run time (its
    contracts keep the package to the standard library and its own modules, but pathlib or typing
    at run time would cost every hook start-up)."""
    code = (
        f"import sys; sys.path.insert(0, {str(SCRIPT.parents[1])!r}); "
        "import memoria_hook_client.capture_worker; print(' '.join(sorted(sys.modules)))"
    )
    loaded = set(
        subprocess.run(
            [sys.executable, "-S", "-c", code],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout.split()
    )
    assert "memoria_hook_client.capture_worker" in loaded
    heavy = {"pathlib", "typing", "subprocess", "http.client", "email", "ssl", "threading", "contextlib"}
    assert loaded & heavy == set()
    assert not any(name == "app" or name.startswith("app.") for name in loaded)
