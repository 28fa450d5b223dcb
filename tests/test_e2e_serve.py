"""End to end: the real `memoria serve` process on an embedded data dir, over real HTTP."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from app.core.net import free_port

pytestmark = pytest.mark.e2e

MEMORIA = str(Path(sys.executable).with_name("memoria"))


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIA_")}
    environ |= {
        "MEMORIA_DATABASE__DATA_DIR": str(tmp_path / "pgdata"),
        "MEMORIA_SERVER__PORT": str(free_port()),
        "HF_HUB_OFFLINE": "1",
    }
    return environ


def _cli(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([MEMORIA, *args], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


class Server:
    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.base = f"http://127.0.0.1:{env['MEMORIA_SERVER__PORT']}"
        self.proc = subprocess.Popen(
            [MEMORIA, "serve"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )

    def wait_ready(self, timeout: float = 90.0) -> float:
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"serve exited early:\n{self.proc.stdout.read() if self.proc.stdout else ''}"
                )
            try:
                if httpx.get(f"{self.base}/readyz", timeout=1).status_code == 200:
                    return time.monotonic() - start
            except httpx.TransportError:
                pass
            time.sleep(0.25)
        raise AssertionError("serve did not become ready")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


ServerFactory = Callable[[], Server]


@pytest.fixture
def server_factory(env: dict[str, str]) -> Iterator[ServerFactory]:
    """Starts `memoria serve` processes on the test environment; every one is stopped at the end."""
    started: list[Server] = []

    def start() -> Server:
        server = Server(env)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def test_serve_stores_over_http_and_survives_a_restart(
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
    assert not (Path(env["MEMORIA_DATABASE__DATA_DIR"]) / "postmaster.pid").exists(), "postgres left running"

    restarted = server_factory()
    restarted.wait_ready()
    again = httpx.get(f"{restarted.base}/v1/memories/{memory_id}", headers=headers)
    assert again.status_code == 200
    assert again.json()["content"] == "The release train leaves on Thursdays"


def test_second_serve_on_the_same_data_dir_is_refused(
    env: dict[str, str], server_factory: ServerFactory
) -> None:
    first = server_factory()
    first.wait_ready()
    second = subprocess.run(
        [MEMORIA, "serve"],
        env=env | {"MEMORIA_SERVER__PORT": str(free_port())},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert second.returncode != 0
    assert "already using the data directory" in second.stderr
    assert httpx.get(f"{first.base}/readyz").status_code == 200
