"""The waiting flusher (`memoria-hook flush --wait`, `memoria_hook_client.flush_wait`): captures spooled
while the server was down go out when it is back, without waiting for the next hook event.

The first test runs it as a hook starts it (the real launcher, detached) against a real
`memoria serve` started only after the spool was written; the others run `wait_and_flush`
in-process against the capture stub of `test_spool`, with a recorded `sleep` where the backoff
matters.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.net import free_port
from memoria_hook_client import flush_wait, spool, state
from memoria_hook_client.flush_wait import MAX_PAUSE_S, start_waiter, wait_and_flush, waiting
from tests.test_e2e_serve import MEMORIA, Server
from tests.test_spool import Stub

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "memoria-hook"
NAMESPACE = "repo:shop-api"


def exchanges(count: int, session: str = "4b1e0c1a") -> list[dict[str, Any]]:
    return [
        {
            "session_id": session,
            "turn": turn,
            "prompt": f"Why does the nightly export job {turn} time out?",
            "reply": f"The export job {turn} reads the whole table at once; it now pages by 500 rows.",
        }
        for turn in range(count)
    ]


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
    return {
        "MEMORIA_CLIENT__STATE_DIR": str(tmp_path / "state"),
        "MEMORIA_CLIENT__HOOK_LOG": str(tmp_path / "hook.log"),
        "MEMORIA_CLIENT__API_KEY": "mem_test_key",
    }


def wait_until(done: Any, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if done():
            return True
        time.sleep(0.1)
    return bool(done())


@pytest.mark.e2e
def test_captures_spooled_while_the_server_was_down_go_out_when_it_is_back_without_a_new_event(
    tmp_path: Path,
) -> None:
    server_env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIA_")}
    server_env |= {
        "MEMORIA_DATABASE__DATA_DIR": str(tmp_path / "pgdata"),
        "MEMORIA_SERVER__PORT": str(free_port()),
        "HF_HUB_OFFLINE": "1",
    }
    key = subprocess.run(
        [MEMORIA, "keys", "create", "--user", "dev", "--create-user"],
        env=server_env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.strip()
    url = f"http://127.0.0.1:{server_env['MEMORIA_SERVER__PORT']}"
    hook_env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIA_")}
    hook_env |= {
        "HOME": str(tmp_path / "home"),
        "MEMORIA_CLIENT__STATE_DIR": str(tmp_path / "state"),
        "MEMORIA_CLIENT__HOOK_LOG": str(tmp_path / "hook.log"),
        "MEMORIA_CLIENT__API_KEY": key,
        "MEMORIA_CLIENT__URL": url,
    }
    spool.append(hook_env, NAMESPACE, url, exchanges(3))
    # the flush a capture worker runs after spooling, with nobody listening yet
    for _ in range(2):  # a second failed flush finds the waiter there and starts none
        done = subprocess.run(
            [sys.executable, "-S", str(SCRIPT), "flush"],
            capture_output=True,
            env=hook_env,
            timeout=60,
            check=False,
        )
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b""), "nothing on screen"
        assert wait_until(lambda: waiting(hook_env) is not None, 10), "a waiter holds the lock"
    first = waiting(hook_env)
    assert state.read_status(hook_env)["flush-attempt"]["outcome"] == "unreachable"

    server = Server(server_env)
    try:
        server.wait_ready()
        # the waiter's next attempt, at most MAX_PAUSE_S after the server answers, sends the spool
        sent = wait_until(lambda: not spool.load(hook_env), MAX_PAUSE_S + 30)
        assert sent, (tmp_path / "hook.log").read_text() if (tmp_path / "hook.log").exists() else "no log"
    finally:
        server.stop()
    record = state.read_status(hook_env)["flush"]
    assert (record["outcome"], record["count"]) == ("flushed", 3)
    assert "flush-attempt" not in state.read_status(hook_env), "the failed attempt is stale once one sent"
    assert wait_until(lambda: waiting(hook_env) is None, 10), "the waiter exits once the spool is empty"
    assert first is not None and first["attempts"] >= 1


def test_only_one_waiter_runs_at_a_time(stub: Stub, env: dict[str, str]) -> None:
    spool.append(env, NAMESPACE, stub.url, exchanges(1))
    held = state.lock_file(os.path.join(state.state_dir(env), flush_wait.WAIT_LOCK), 1.0)
    assert held is not None
    try:
        assert wait_and_flush(env, []) == "already-waiting"
    finally:
        state.unlock_file(held)
    assert stub.requests == [] and len(spool.load(env)) == 1


def test_the_waiter_tries_again_with_growing_pauses_until_the_server_takes_the_spool(
    stub: Stub, env: dict[str, str]
) -> None:
    spool.append(env, NAMESPACE, stub.url, exchanges(2))
    stub.statuses = [503] * 7
    pauses: list[float] = []
    seen: list[dict[str, Any] | None] = []

    def sleep(seconds: float) -> None:
        pauses.append(seconds)
        seen.append(waiting(env))

    assert wait_and_flush(env, [], sleep) == "flushed"
    assert pauses == [1.0, 2.0, 4.0, 8.0, 16.0, MAX_PAUSE_S, MAX_PAUSE_S]
    assert spool.load(env) == [] and sorted(turn for _, turn in stub.kept) == [0, 1]
    last = seen[-1]
    assert last is not None and (last["attempts"], last["last_outcome"]) == (7, "http-503")
    assert waiting(env) is None and not os.path.exists(
        os.path.join(state.state_dir(env), flush_wait.WAIT_FILE)
    )


def test_the_waiter_gives_up_after_its_time_limit_and_keeps_the_spool(env: dict[str, str]) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    spool.append(env, NAMESPACE, dead, exchanges(1))
    notes: list[str] = []
    started = time.monotonic()
    assert wait_and_flush({**env, "MEMORIA_CLIENT__FLUSH_WAIT_S": "0.3"}, notes) == "unreachable"
    assert time.monotonic() - started < 5
    assert any("gave up after" in note for note in notes)
    assert len(spool.load(env)) == 1 and waiting(env) is None


def test_a_refusal_that_waiting_cannot_change_ends_the_wait_at_once(
    tmp_path: Path, env: dict[str, str]
) -> None:
    no_key = {
        **{k: v for k, v in env.items() if k != "MEMORIA_CLIENT__API_KEY"},
        "MEMORIA_CLIENT__KEY_FILE": str(tmp_path / "absent"),
    }
    spool.append(no_key, NAMESPACE, f"http://127.0.0.1:{free_port()}", exchanges(1))

    def sleep(_seconds: float) -> None:
        raise AssertionError("waited for something only a person can fix")

    assert wait_and_flush(no_key, [], sleep) == "no-key"
    assert len(spool.load(no_key)) == 1


def test_with_waiting_turned_off_a_failed_flush_starts_no_waiter(env: dict[str, str]) -> None:
    assert start_waiter({**env, "MEMORIA_CLIENT__FLUSH_WAIT_S": "0"}, []) is False
    assert waiting(env) is None


@pytest.mark.parametrize(
    ("outcome", "retried"),
    [("unreachable", True), ("http-503", True), ("http-429", True), ("no-key", False), ("http-401", False)],
)
def test_only_a_server_down_slow_or_failing_is_waited_for(outcome: str, retried: bool) -> None:
    assert flush_wait.retried(outcome) is retried
