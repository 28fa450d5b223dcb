"""The embedded postmaster is restarted when it dies, and dead holders do not keep it running."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from app.db.embedded import HANDLE_FILE, TUNING_FILE, EmbeddedPostgres, process_alive
from app.db.supervisor import PostmasterSupervisor

BOUND_S = 30.0  # a restart takes ~1-2 s here; on a loaded 2-core box far less than this


def _postmaster_pid(pgdata: Path) -> int:
    return int((pgdata / "postmaster.pid").read_text().splitlines()[0])


def _wait_for(condition: Callable[[], bool], what: str, timeout: float = BOUND_S) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout:.0f} s: {what}")


def _answers(url: str) -> bool:
    try:
        with psycopg.connect(url, connect_timeout=2) as conn:
            return conn.execute("SELECT 1").fetchone() == (1,)
    except psycopg.OperationalError:
        return False


@pytest.fixture
def embedded(tmp_path: Path) -> Iterator[EmbeddedPostgres]:
    server = EmbeddedPostgres(tmp_path / "pgdata", "memoria", "32MB")
    server.start()
    yield server
    server.stop()


def test_a_killed_postmaster_is_restarted_on_the_same_url(
    embedded: EmbeddedPostgres, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="app.db.supervisor")
    with psycopg.connect(embedded.url, autocommit=True) as conn:
        conn.execute("CREATE TABLE kept (note text)")
        conn.execute("INSERT INTO kept VALUES ('written before the kill')")
    supervisor = PostmasterSupervisor(embedded, attempts=5, max_backoff_s=2.0, on_give_up=pytest.fail)
    supervisor.start()
    try:
        killed = _postmaster_pid(embedded.data_dir)
        os.kill(killed, signal.SIGKILL)
        _wait_for(lambda: supervisor.restarts == 1 and _answers(embedded.url), "postgres back")
        restarted = _postmaster_pid(embedded.data_dir)
        assert restarted != killed
        assert embedded.postmaster_pid == restarted  # adopted: stopping the handle stops this one
        with psycopg.connect(embedded.url) as conn:
            assert conn.execute("SELECT note FROM kept").fetchall() == [("written before the kill",)]
        stopped = [r.getMessage() for r in caplog.records if "embedded PostgreSQL stopped" in r.getMessage()]
        assert len(stopped) == 1
        assert f"postmaster pid {killed}" in stopped[0]
    finally:
        supervisor.stop()
    embedded.stop()
    assert not process_alive(restarted), "the restarted postmaster outlived the last handle"


def test_the_supervisor_gives_up_after_its_attempts_and_says_why(embedded: EmbeddedPostgres) -> None:
    # A setting PostgreSQL rejects: the running server never rereads it, every restart fails on it.
    (embedded.data_dir / TUNING_FILE).write_text("shared_buffers = 'not a size'\n")
    reasons: list[str] = []
    supervisor = PostmasterSupervisor(embedded, attempts=2, max_backoff_s=1.0, on_give_up=reasons.append)
    supervisor.start()
    try:
        os.kill(_postmaster_pid(embedded.data_dir), signal.SIGKILL)
        _wait_for(lambda: bool(reasons), "the supervisor gave up")
    finally:
        supervisor.stop()
    assert reasons == ["the embedded PostgreSQL could not be restarted (2 attempts)"]
    assert supervisor.gave_up == reasons[0]
    assert supervisor.restarts == 0
    assert "shared_buffers" in (embedded.data_dir / "log").read_text()  # why, for whoever reads the log


def test_a_holder_killed_with_sigkill_does_not_keep_postgres_running(tmp_path: Path) -> None:
    pgdata = tmp_path / "pgdata"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from app.db.embedded import start_server; "
            "start_server(Path(sys.argv[1]), '32MB'); print('up', flush=True); time.sleep(120)",
            str(pgdata),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "up"  # bounded: the child exits within 120 s
    finally:
        holder.kill()
        holder.wait(timeout=30)
    assert json.loads((pgdata / HANDLE_FILE).read_text()) == [holder.pid]  # pgserver never took it out
    postmaster = _postmaster_pid(pgdata)
    assert process_alive(postmaster)

    embedded = EmbeddedPostgres(pgdata, "memoria", "32MB")
    embedded.start()
    assert json.loads((pgdata / HANDLE_FILE).read_text()) == [os.getpid()]
    embedded.stop()
    _wait_for(lambda: not process_alive(postmaster), "postgres stopped with its last live holder")
    assert not (pgdata / "postmaster.pid").exists()
