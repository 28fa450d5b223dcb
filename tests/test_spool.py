"""The capture spool (`memoria_hook_client.spool`) and the client state files (`memoria_hook_client.state`).

The server here is a small stub on 127.0.0.1 that behaves like the capture route where it matters:
it answers with scripted statuses and keeps each (session, turn) once, as the route's capture key
does, so "sent twice" and "stored twice" can be told apart. Writers that crash or race are real
processes killed with SIGKILL or started together.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from app.core.net import free_port
from memoria_hook_client import spool, state
from memoria_hook_client.spool import MAX_BODY_BYTES, append, flush, load

REPO_ROOT = Path(__file__).resolve().parents[1]


class Stub:
    """Scripted answers (`statuses`, then 200) and what was received and kept."""

    def __init__(self) -> None:
        self.statuses: list[int] = []
        self.requests: list[tuple[str, dict[str, str], list[dict[str, Any]]]] = []
        self.kept: dict[tuple[str, int], dict[str, Any]] = {}
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with stub.lock:
                    stub.requests.append((self.path, dict(self.headers), body["exchanges"]))
                    status = stub.statuses.pop(0) if stub.statuses else 200
                    stored = duplicates = 0
                    if status == 200:
                        for exchange in body["exchanges"]:
                            key = (exchange["session_id"], exchange["turn"])
                            if key in stub.kept:
                                duplicates += 1
                            else:
                                stub.kept[key] = exchange
                                stored += 1
                answer = json.dumps({"stored": stored, "duplicates": duplicates, "skipped": 0}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *_args: object) -> None:
                pass

        return Handler

    @property
    def turns(self) -> list[int]:
        return [exchange["turn"] for _, _, exchanges in self.requests for exchange in exchanges]


@pytest.fixture
def stub() -> Iterator[Stub]:
    server = Stub()
    thread = threading.Thread(target=server.server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.server.shutdown()
    server.server.server_close()
    thread.join(timeout=5)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"MEMORIA_CLIENT__STATE_DIR": str(tmp_path / "state"), "MEMORIA_CLIENT__API_KEY": "mem_test_key"}


def _exchanges(first: int, count: int, session: str = "s1", size: int = 10) -> list[dict[str, Any]]:
    return [
        {"session_id": session, "turn": turn, "prompt": f"prompt {turn}", "reply": "r" * size, "digest": {}}
        for turn in range(first, first + count)
    ]


def test_flush_sends_batches_oldest_first_and_empties_the_spool(stub: Stub, env: dict[str, str]) -> None:
    append(env, "repo:one", stub.url, _exchanges(0, 2))
    append(env, "repo:two", stub.url, _exchanges(2, 3))
    notes: list[str] = []
    result = flush(env, 10, notes)
    assert result == {
        "sent": 5,
        "stored": 5,
        "duplicates": 0,
        "folded": 0,
        "skipped": {},
        "dropped": 0,
        "left": 0,
        "outcome": "flushed",
    }
    assert [path for path, _, _ in stub.requests] == [
        "/v1/capture/claude-code?namespace=repo%3Aone",
        "/v1/capture/claude-code?namespace=repo%3Atwo",
    ]
    assert stub.requests[0][1]["Authorization"] == "Bearer mem_test_key"
    assert stub.turns == [0, 1, 2, 3, 4]
    assert load(env) == [] and notes == []


def test_a_server_error_stops_the_flush_and_keeps_the_rest_in_order(stub: Stub, env: dict[str, str]) -> None:
    for first in (0, 2, 4):
        append(env, "ns", stub.url, _exchanges(first, 2))
    stub.statuses = [200, 503]
    notes: list[str] = []
    result = flush(env, 10, notes)
    assert (result["outcome"], result["sent"], result["left"]) == ("http-503", 2, 4)
    assert [e["turn"] for batch in load(env) for e in batch["exchanges"]] == [2, 3, 4, 5]
    assert "503" in notes[0]
    assert flush(env, 10, [])["outcome"] == "flushed"
    assert sorted(stub.kept) == [("s1", turn) for turn in range(6)]


@pytest.mark.parametrize("status", [401, 408, 429, 500, 503])
def test_answers_that_can_change_later_keep_the_batch(stub: Stub, env: dict[str, str], status: int) -> None:
    append(env, "ns", stub.url, _exchanges(0, 1))
    stub.statuses = [status]
    assert flush(env, 10, [])["outcome"] == f"http-{status}"
    assert len(load(env)) == 1


@pytest.mark.parametrize("status", [403, 404])
def test_a_namespace_refused_for_now_waits_while_other_namespaces_go(
    stub: Stub, env: dict[str, str], status: int
) -> None:
    append(env, "@bob/shared", stub.url, _exchanges(0, 1))
    append(env, "repo:mine", stub.url, _exchanges(1, 1))
    append(env, "@bob/shared", stub.url, _exchanges(2, 1))
    stub.statuses = [status]
    result = flush(env, 10, [])
    assert (result["outcome"], result["sent"], result["left"]) == (f"http-{status}", 1, 2)
    assert [path.rsplit("=", 1)[1] for path, _, _ in stub.requests] == ["%40bob%2Fshared", "repo%3Amine"]
    assert [batch["namespace"] for batch in load(env)] == ["@bob/shared", "@bob/shared"]
    assert flush(env, 10, [])["outcome"] == "flushed"
    assert stub.turns == [0, 1, 0, 2]


def test_a_request_the_server_will_never_accept_is_dropped_and_the_rest_goes(
    stub: Stub, env: dict[str, str]
) -> None:
    append(env, "ns", stub.url, _exchanges(0, 1))
    append(env, "ns", stub.url, _exchanges(1, 1))
    stub.statuses = [400]
    notes: list[str] = []
    result = flush(env, 10, notes)
    assert (result["outcome"], result["dropped"], result["sent"]) == ("flushed", 1, 1)
    assert list(stub.kept) == [("s1", 1)]
    assert "refused (400)" in notes[0]


def test_too_large_answers_halve_the_slice_before_anything_is_dropped(
    stub: Stub, env: dict[str, str]
) -> None:
    append(env, "ns", stub.url, _exchanges(0, 8))
    stub.statuses = [413, 422]
    result = flush(env, 10, [])
    assert (result["outcome"], result["dropped"], result["sent"]) == ("flushed", 0, 8)
    assert [len(exchanges) for _, _, exchanges in stub.requests] == [8, 4, 2, 2, 2, 2]


def test_big_batches_go_out_in_slices_of_at_most_200_exchanges_and_half_a_megabyte(
    stub: Stub, env: dict[str, str]
) -> None:
    append(env, "ns", stub.url, _exchanges(0, 450))
    append(env, "ns", stub.url, _exchanges(450, 12, size=100_000))
    assert flush(env, 30, [])["outcome"] == "flushed"
    sizes = [len(exchanges) for _, _, exchanges in stub.requests]
    assert sizes[:3] == [200, 200, 50]
    assert all(len(json.dumps({"exchanges": ex})) <= MAX_BODY_BYTES for _, _, ex in stub.requests)
    assert sum(sizes) == 462 and stub.turns == list(range(462))


def test_an_unreachable_server_keeps_everything(env: dict[str, str]) -> None:
    append(env, "ns", f"http://127.0.0.1:{free_port()}", _exchanges(0, 3))
    notes: list[str] = []
    result = flush(env, 5, notes)
    assert (result["outcome"], result["left"]) == ("unreachable", 3)
    assert "unreachable" in notes[0]


def test_without_a_key_the_spool_is_kept(stub: Stub, env: dict[str, str], tmp_path: Path) -> None:
    no_key = {**env, "MEMORIA_CLIENT__API_KEY": "", "MEMORIA_CLIENT__KEY_FILE": str(tmp_path / "none")}
    append(no_key, "ns", stub.url, _exchanges(0, 1))
    assert flush(no_key, 5, [])["outcome"] == "no-key"
    assert stub.requests == [] and len(load(no_key)) == 1


def test_a_crash_after_the_server_answered_resends_but_never_stores_twice(
    stub: Stub, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    append(env, "ns", stub.url, _exchanges(0, 2))
    append(env, "ns", stub.url, _exchanges(2, 2))

    class Crash(BaseException):
        pass

    def crash(*_args: object) -> None:
        raise Crash

    with monkeypatch.context() as patched:
        patched.setattr(spool, "_drop_sent", crash)
        with pytest.raises(Crash):
            flush(env, 10, [])
    assert len(load(env)) == 2  # the accepted batch was not removed before the "crash"
    result = flush(env, 10, [])
    assert (result["sent"], result["stored"], result["duplicates"]) == (4, 2, 2)
    assert stub.turns == [0, 1, 0, 1, 2, 3]
    assert sorted(stub.kept) == [("s1", turn) for turn in range(4)]
    assert load(env) == []


def test_a_failed_rewrite_leaves_the_previous_spool_whole(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    append(env, "ns", "http://127.0.0.1:9", _exchanges(0, 2))
    before = Path(state.spool_path(env)).read_bytes()

    def refuse(*_args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="No space left"):
        append(env, "ns", "http://127.0.0.1:9", _exchanges(2, 2))
    monkeypatch.undo()
    assert Path(state.spool_path(env)).read_bytes() == before
    assert sorted(os.listdir(state.state_dir(env))) == ["spool.json", "spool.lock"]  # no temp left


WRITER = """
import sys
sys.path.insert(0, {root!r})
from memoria_hook_client.spool import append
env = {{"MEMORIA_CLIENT__STATE_DIR": {state!r}}}
name = sys.argv[1]
for i in range(int(sys.argv[2])):
    exchange = {{"session_id": name, "turn": i, "prompt": "p" * 2000, "reply": ""}}
    append(env, name, "http://127.0.0.1:9", [exchange])
"""


def _writer(env: dict[str, str], name: str, count: int) -> subprocess.Popen[bytes]:
    code = WRITER.format(root=str(REPO_ROOT), state=env["MEMORIA_CLIENT__STATE_DIR"])
    return subprocess.Popen([sys.executable, "-S", "-c", code, name, str(count)])


def test_concurrent_writers_take_turns_and_keep_every_batch_in_order(env: dict[str, str]) -> None:
    writers = [_writer(env, f"w{n}", 25) for n in range(4)]
    for writer in writers:
        assert writer.wait(timeout=120) == 0
    batches = load(env)
    assert len(batches) == 100
    for n in range(4):
        turns = [b["exchanges"][0]["turn"] for b in batches if b["namespace"] == f"w{n}"]
        assert turns == list(range(25))


def test_a_writer_killed_at_any_moment_leaves_a_readable_spool(env: dict[str, str]) -> None:
    for attempt in range(5):
        writer = _writer(env, f"k{attempt}", 100_000)
        time.sleep(0.15 + 0.05 * attempt)
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)
        with open(state.spool_path(env), encoding="utf-8") as file:
            batches = json.load(file)  # never torn
        turns = [b["exchanges"][0]["turn"] for b in batches if b["namespace"] == f"k{attempt}"]
        assert turns == list(range(len(turns)))  # a prefix: nothing lost in the middle, nothing twice


def test_the_spool_drops_its_oldest_batches_past_its_cap(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spool, "MAX_SPOOLED_EXCHANGES", 5)
    notes: list[str] = []
    for first in (0, 3, 6):
        append(env, "ns", "http://127.0.0.1:9", _exchanges(first, 3), notes)
    assert [e["turn"] for batch in load(env) for e in batch["exchanges"]] == [6, 7, 8]
    assert len(notes) == 2 and "dropped the oldest 3 exchanges" in notes[0]


def test_the_spool_drops_its_oldest_batches_past_its_byte_cap(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spool, "MAX_SPOOL_BYTES", 25_000)
    for first in range(0, 8, 2):
        append(env, "ns", "http://127.0.0.1:9", _exchanges(first, 2, size=5_000))
    assert [e["turn"] for batch in load(env) for e in batch["exchanges"]] == [4, 5, 6, 7]
    assert os.path.getsize(state.spool_path(env)) <= 25_000


def test_only_one_flusher_runs_at_a_time(stub: Stub, env: dict[str, str]) -> None:
    append(env, "ns", stub.url, _exchanges(0, 1))
    held = state.lock_file(os.path.join(state.state_dir(env), spool.FLUSH_LOCK), 1)
    assert held is not None
    try:
        result = flush(env, 0.2, [])
    finally:
        state.unlock_file(held)
    assert (result["outcome"], result["left"]) == ("busy", 1)
    assert stub.requests == []


def test_state_dir_prefers_the_override_then_xdg_state_home(tmp_path: Path) -> None:
    assert state.state_dir({"MEMORIA_CLIENT__STATE_DIR": "/x/y", "XDG_STATE_HOME": "/s"}) == "/x/y"
    assert state.state_dir({"XDG_STATE_HOME": "/s"}) == "/s/memoria"
    home = os.path.expanduser("~")
    assert state.state_dir({"XDG_STATE_HOME": "relative"}) == os.path.join(home, ".local", "state", "memoria")


def test_status_records_keep_the_latest_outcome_of_each_kind(env: dict[str, str]) -> None:
    assert state.read_status(env) == {}
    state.record(env, "capture", "spooled", "repo:a", 3)
    state.record(env, "recall", "ok", "repo:a", 2)
    state.record(env, "capture", "nothing-new", "repo:b", 0)
    status = state.read_status(env)
    assert set(status) == {"capture", "recall"}
    assert {k: status["capture"][k] for k in ("outcome", "namespace", "count")} == {
        "outcome": "nothing-new",
        "namespace": "repo:b",
        "count": 0,
    }
    assert status["capture"]["at"].endswith("Z")


def test_recording_status_never_raises(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    state.record({"MEMORIA_CLIENT__STATE_DIR": str(blocker / "state")}, "capture", "x", None, 1)


def test_spool_summary_counts_batches_exchanges_and_bytes(env: dict[str, str]) -> None:
    assert state.spool_summary(env) == {"batches": 0, "exchanges": 0, "bytes": 0}
    append(env, "ns", "http://127.0.0.1:9", _exchanges(0, 3))
    append(env, "ns", "http://127.0.0.1:9", _exchanges(3, 2))
    summary = state.spool_summary(env)
    assert (summary["batches"], summary["exchanges"]) == (2, 5)
    assert summary["bytes"] == os.path.getsize(state.spool_path(env))
