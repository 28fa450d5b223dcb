"""End to end: the real `memoria serve` process on an embedded data dir, over real HTTP."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg
import pytest

from app.core.net import free_port
from app.db.embedded import HANDLE_FILE, TUNING_FILE, process_alive, start_server
from app.db.urls import with_database
from tests.fakes.processes import stop_gracefully

pytestmark = pytest.mark.e2e

MEMORIA = str(Path(sys.executable).with_name("memoria"))
RECOVERY_BOUND_S = 30.0  # kill -9 of the postmaster to ready again (measured: ~2 s)
EXIT_BOUND_S = 30.0  # SIGTERM to exit: the 10 s drain bound, jobs, pools and a PostgreSQL checkpoint


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIA_")}
    environ |= {
        "MEMORIA_DATABASE__DATA_DIR": str(tmp_path / "pgdata"),
        "MEMORIA_SERVER__PORT": str(free_port()),
        "HF_HUB_OFFLINE": "1",
        "PYTHONUNBUFFERED": "1",  # log lines arrive when they are written: the tests time them
    }
    return environ


def _cli(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([MEMORIA, *args], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _pgdata(env: dict[str, str]) -> Path:
    return Path(env["MEMORIA_DATABASE__DATA_DIR"])


def _postmaster_pid(env: dict[str, str]) -> int | None:
    try:
        return int((_pgdata(env) / "postmaster.pid").read_text().splitlines()[0])
    except (OSError, IndexError, ValueError):
        return None


def _wait_for(condition: Callable[[], bool], what: str, timeout: float) -> float:
    """Seconds until `condition` held; fails after `timeout`."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if condition():
            return time.monotonic() - start
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout:.0f} s: {what}")


@dataclass(frozen=True)
class Line:
    at: float  # time.monotonic() when the test read it
    text: str


class Server:
    def __init__(self, env: dict[str, str], args: tuple[str, ...] = ()) -> None:
        self.env = env
        self.base = f"http://127.0.0.1:{env['MEMORIA_SERVER__PORT']}"
        self.proc = subprocess.Popen(
            [MEMORIA, "serve", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        self.lines: list[Line] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for text in self.proc.stdout:  # ends when the process closes its output
            self.lines.append(Line(time.monotonic(), text.rstrip("\n")))

    def output(self) -> str:
        return "\n".join(line.text for line in self.lines)

    def first_line(self, needle: str) -> Line:
        return next(line for line in self.lines if needle in line.text)

    def ready(self) -> bool:
        try:
            return httpx.get(f"{self.base}/readyz", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    def wait_ready(self, timeout: float = 90.0) -> float:
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            if self.proc.poll() is not None:
                self._reader.join(5)
                raise AssertionError(f"serve exited early:\n{self.output()}")
            if self.ready():
                return time.monotonic() - start
            time.sleep(0.25)
        raise AssertionError("serve did not become ready")

    def stop(self) -> None:
        stop_gracefully(self.proc)
        self._reader.join(5)


ServerFactory = Callable[..., Server]


@pytest.fixture
def server_factory(env: dict[str, str]) -> Iterator[ServerFactory]:
    """Starts `memoria serve` processes on the test environment; every one is stopped at the end."""
    started: list[Server] = []

    def start(*args: str, **extra_env: str) -> Server:
        server = Server(env | extra_env, args)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
    pid = _postmaster_pid(env)
    if pid is not None and process_alive(pid) and str(_pgdata(env)) in _cmdline(pid):
        os.kill(pid, signal.SIGINT)  # a failed test must not leave its PostgreSQL behind (fast shutdown)


def _assert_a_second_serve_is_refused(env: dict[str, str]) -> None:
    """A second `memoria serve` on the data directory of a running one exits non-zero, saying so."""
    second = subprocess.run(
        [MEMORIA, "serve"],
        env=env | {"MEMORIA_SERVER__PORT": str(free_port())},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert second.returncode != 0
    assert "already using the data directory" in second.stderr, second.stderr


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def test_serve_stores_over_http_refuses_a_second_serve_on_its_data_dir_and_survives_a_restart(
    env: dict[str, str], server_factory: ServerFactory
) -> None:
    key = _cli(env, "keys", "create", "--user", "e2e", "--create-user")
    server = server_factory()
    server.wait_ready()
    headers = {"Authorization": f"Bearer {key}"}
    stored = httpx.post(
        f"{server.base}/v1/memories",
        json={"content": "The release train leaves on Thursdays"},
        headers=headers,
    )
    assert stored.status_code == 201, stored.text
    memory_id = stored.json()["id"]

    # a second `memoria serve` on the same data directory is refused, and the first one serves on
    _assert_a_second_serve_is_refused(env)
    assert httpx.get(f"{server.base}/readyz").status_code == 200

    # admin commands work while the server runs (they join the same embedded postmaster)
    second_key = _cli(env, "keys", "create", "--user", "e2e")
    assert (
        httpx.get(
            f"{server.base}/v1/memories/{memory_id}", headers={"Authorization": f"Bearer {second_key}"}
        ).status_code
        == 200
    )

    server.stop()
    assert server.proc.returncode == 0
    assert not (_pgdata(env) / "postmaster.pid").exists(), "postgres left running"

    restarted = server_factory()
    restarted.wait_ready()
    again = httpx.get(f"{restarted.base}/v1/memories/{memory_id}", headers=headers)
    assert again.status_code == 200
    assert again.json()["content"] == "The release train leaves on Thursdays"


def test_serve_restarts_its_postgres_after_the_postmaster_is_killed(
    env: dict[str, str], server_factory: ServerFactory
) -> None:
    key = _cli(env, "keys", "create", "--user", "e2e", "--create-user")
    headers = {"Authorization": f"Bearer {key}"}
    # the request deadline is not under test here: on a loaded box the first embedding may be slow
    server = server_factory(MEMORIA_SERVER__REQUEST_DEADLINE_MS="30000")
    server.wait_ready()
    before = httpx.post(
        f"{server.base}/v1/memories",
        json={"content": "Deploys go out through the blue pipeline", "namespace": "ops"},
        headers=headers,
    )
    assert before.status_code == 201, before.text

    killed = _postmaster_pid(env)
    assert killed is not None
    os.kill(killed, signal.SIGKILL)
    recovered_s = _wait_for(
        lambda: _postmaster_pid(env) not in (None, killed) and server.ready(),
        "ready again on a new postmaster",
        RECOVERY_BOUND_S,
    )
    print(f"ready again {recovered_s:.1f} s after kill -9 of the postmaster")

    after = httpx.post(
        f"{server.base}/v1/memories",
        json={"content": "Rollbacks use the green pipeline", "namespace": "ops"},
        headers=headers,
    )
    assert after.status_code == 201, after.text
    recalled = httpx.post(
        f"{server.base}/v1/recall",
        json={"query": "which pipeline do deploys and rollbacks use?", "namespace": "ops"},
        headers=headers,
        timeout=30,
    )
    assert recalled.status_code == 200, recalled.text
    ids = {hit["id"] for hit in recalled.json()["results"]}
    assert {before.json()["id"], after.json()["id"]} <= ids
    assert server.proc.poll() is None, "the server itself was not restarted"
    assert f"embedded PostgreSQL stopped (postmaster pid {killed}" in server.output()
    _wait_for(lambda: "warming up again" in server.output(), "a warm-up after the restart", 10)


def test_a_clean_stop_after_serve_was_killed_stops_postgres_and_a_second_serve_is_still_refused(
    env: dict[str, str], server_factory: ServerFactory
) -> None:
    killed = server_factory()
    killed.wait_ready()
    postmaster = _postmaster_pid(env)
    assert postmaster is not None
    killed.proc.kill()
    killed.proc.wait(timeout=30)
    assert process_alive(postmaster), "PostgreSQL outlives a killed serve (pgserver daemonises it)"
    assert json.loads((_pgdata(env) / HANDLE_FILE).read_text()) == [killed.proc.pid]  # a stale handle

    server = server_factory()
    server.wait_ready()
    assert _postmaster_pid(env) == postmaster  # joined the running one
    _assert_a_second_serve_is_refused(env)

    server.stop()
    assert server.proc.returncode == 0
    _wait_for(lambda: not process_alive(postmaster), "PostgreSQL stopped with the clean exit", EXIT_BOUND_S)
    assert not (_pgdata(env) / "postmaster.pid").exists()


def _slow_batch() -> list[dict[str, str]]:
    """A naturally slow request: 100 long memories, each embedded before the insert (seconds)."""
    return [
        {
            "content": f"Note {i}: " + " ".join(f"word{i}x{j} shipped release {j}" for j in range(120)),
            "namespace": "d",
        }
        for i in range(100)
    ]


class InFlight:
    """A request sent from a thread; when it finished and what came back (or how it failed)."""

    def __init__(self, send: Callable[[], httpx.Response]) -> None:
        self.finished_at: float | None = None
        self.response: httpx.Response | None = None
        self.error: httpx.TransportError | None = None
        self._send = send
        self._thread = threading.Thread(target=self._run)
        self._thread.start()

    def _run(self) -> None:
        try:
            self.response = self._send()
        except httpx.TransportError as exc:
            self.error = exc
        self.finished_at = time.monotonic()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)
        assert self.finished_at is not None, "the request never finished"


def _store_in_flight(server: Server, key: str) -> InFlight:
    batch = _slow_batch()
    flight = InFlight(
        lambda: httpx.post(
            f"{server.base}/v1/memories", json=batch, headers={"Authorization": f"Bearer {key}"}, timeout=120
        )
    )
    time.sleep(0.5)  # the body (~500 kB) is sent well within this; embedding 100 texts takes seconds
    return flight


def _refuses_new_connections(server: Server) -> bool:
    try:
        httpx.get(f"{server.base}/healthz", timeout=1)
    except httpx.ConnectError:
        return True
    except httpx.TransportError:
        return False
    return False


def test_sigterm_lets_an_in_flight_request_finish_refuses_new_connections_and_stops_postgres(
    env: dict[str, str], server_factory: ServerFactory
) -> None:
    key = _cli(env, "keys", "create", "--user", "e2e", "--create-user")
    # bounds generous enough for the slow request on a loaded box: the drain is what is under test
    server = server_factory("--shutdown-timeout", "60", MEMORIA_SERVER__REQUEST_DEADLINE_MS="120000")
    server.wait_ready()
    postmaster = _postmaster_pid(env)
    assert postmaster is not None
    flight = _store_in_flight(server, key)
    sigterm_at = time.monotonic()
    server.proc.send_signal(signal.SIGTERM)

    _wait_for(lambda: _refuses_new_connections(server), "new connections refused after SIGTERM", 10)
    refused_at = time.monotonic()
    flight.join(timeout=120)
    assert flight.response is not None, flight.error
    assert flight.response.status_code == 201, flight.response.text
    assert len(flight.response.json()["results"]) == 100
    assert flight.finished_at is not None
    assert sigterm_at < refused_at < flight.finished_at, "the request was no longer in flight when refused"

    server.proc.wait(timeout=EXIT_BOUND_S)
    print(
        f"in-flight request finished {flight.finished_at - sigterm_at:.1f} s and serve exited "
        f"{time.monotonic() - sigterm_at:.1f} s after SIGTERM"
    )
    assert server.proc.returncode == 0
    assert not process_alive(postmaster)
    assert not (_pgdata(env) / "postmaster.pid").exists()


def test_sigterm_cuts_requests_that_outlive_the_shutdown_timeout(
    env: dict[str, str], server_factory: ServerFactory
) -> None:
    key = _cli(env, "keys", "create", "--user", "e2e", "--create-user")
    server = server_factory("--shutdown-timeout", "1", MEMORIA_SERVER__REQUEST_DEADLINE_MS="120000")
    server.wait_ready()
    postmaster = _postmaster_pid(env)
    flight = _store_in_flight(server, key)
    sigterm_at = time.monotonic()
    server.proc.send_signal(signal.SIGTERM)
    server.proc.wait(timeout=EXIT_BOUND_S)
    exited_s = time.monotonic() - sigterm_at
    flight.join(timeout=30)
    print(f"serve exited {exited_s:.1f} s after SIGTERM with a request still running at the 1 s bound")
    assert server.proc.returncode == 0
    assert flight.response is None or flight.response.status_code != 201, "the request was not cut"
    assert postmaster is not None
    assert not process_alive(postmaster)


def test_serve_is_ready_only_after_its_warm_up_which_is_bounded(
    env: dict[str, str], server_factory: ServerFactory
) -> None:
    _cli(env, "migrate")
    # This test holds the postmaster like an admin command would, and locks `concept_edges` (warmed
    # last, read by nothing else at start) so that the warm-up of `memoria serve` cannot finish: it
    # must give up at its bound and serve anyway.
    holder = start_server(_pgdata(env), "512MB")
    try:
        with psycopg.connect(with_database(holder.get_uri(), "memoria")) as conn:
            conn.execute("LOCK TABLE concept_edges IN ACCESS EXCLUSIVE MODE")  # held until the block ends
            server = server_factory(MEMORIA_DATABASE__WARMUP_TIMEOUT_S="3")
            server.wait_ready()
            ready_at = time.monotonic()
            warmed = server.first_line("warm-up took")
            assert warmed.at <= ready_at
            assert "stopped early: the 3 s bound was reached" in warmed.text
            match = re.search(r"warm-up took ([0-9.]+) s", warmed.text)
            assert match is not None
            assert 3.0 <= float(match.group(1)) < 3.0 + 5  # the bound, plus honest slack
        server.stop()
        assert server.proc.returncode == 0
    finally:
        holder.cleanup()


def test_serve_exits_1_when_its_postgres_cannot_be_restarted(
    env: dict[str, str], server_factory: ServerFactory
) -> None:
    server = server_factory(
        MEMORIA_DATABASE__EMBEDDED_RESTART_ATTEMPTS="2", MEMORIA_DATABASE__EMBEDDED_RESTART_MAX_BACKOFF_S="1"
    )
    server.wait_ready()
    # A setting PostgreSQL rejects: the running server never rereads it, every restart fails on it.
    (_pgdata(env) / TUNING_FILE).write_text("shared_buffers = 'not a size'\n")
    postmaster = _postmaster_pid(env)
    assert postmaster is not None
    os.kill(postmaster, signal.SIGKILL)
    server.proc.wait(timeout=60)
    server.stop()  # joins the output reader
    assert server.proc.returncode == 1
    assert "the embedded PostgreSQL could not be restarted (2 attempts)" in server.output()
