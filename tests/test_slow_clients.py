"""Slow and greedy clients cannot take the server down: the uvicorn `memoria serve` runs
(`app.serving.uvicorn_config`), in a thread of this process on 127.0.0.1, with a small app.

Bounded: a thousand sockets at most, timeouts of a second, every wait capped. The only timing
asserted is that an answer comes at all within a generous bound.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import selectors
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import uvicorn
from litestar import Litestar, Request, get, post
from prometheus_client import CollectorRegistry, generate_latest

from app.core.net import free_port
from app.serving import (
    ADDRESS_CAP,
    BODY_TIMEOUT,
    FD_RESERVE,
    HEADER_TIMEOUT,
    SERVER_CAP,
    BurstLog,
    ConnectionGuard,
    ConnectionLimits,
    connection_ceiling,
    uvicorn_config,
)

ANSWER_BOUND_S = 5.0  # "answers at all": far above what an idle machine takes
CLOSE_BOUND_S = 15.0  # a timed-out socket is closed within its timeout plus this
SLOW_SOCKETS = 1000


@get("/healthz", sync_to_thread=False)
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@post("/echo")
async def echo(request: Request[Any, Any, Any]) -> dict[str, int]:
    return {"bytes": len(await request.body())}


@dataclass(frozen=True)
class Running:
    port: int
    guard: ConnectionGuard

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=ANSWER_BOUND_S)


@contextmanager
def running(limits: ConnectionLimits) -> Iterator[Running]:
    """The server `memoria serve` runs, with `limits`, serving a health check and an echo."""
    guard = ConnectionGuard(limits)
    port = free_port()
    config = uvicorn_config(
        Litestar([healthz, echo], logging_config=None),
        guard,
        host="127.0.0.1",
        port=port,
        keep_alive_s=5,
        log_level="warning",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield Running(port, guard)
    finally:
        server.should_exit = True
        thread.join(30)


def limits(**changes: float) -> ConnectionLimits:
    base = {
        "header_timeout_s": 1.0,
        "body_timeout_s": 1.0,
        "max_connections": 4096,
        "max_connections_per_address": 0,
    }
    base.update(changes)
    return ConnectionLimits(
        header_timeout_s=base["header_timeout_s"],
        body_timeout_s=base["body_timeout_s"],
        max_connections=int(base["max_connections"]),
        max_connections_per_address=int(base["max_connections_per_address"]),
    )


def wait_closed(sockets: list[socket.socket], bound_s: float) -> list[bytes]:
    """What each socket received before the server closed it; fails if one is still open after `bound_s`."""
    received = dict.fromkeys(sockets, b"")
    with selectors.DefaultSelector() as selector:
        for sock in sockets:
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)
        open_ = set(sockets)
        by_fd = {sock.fileno(): sock for sock in sockets}
        deadline = time.monotonic() + bound_s
        while open_ and time.monotonic() < deadline:
            for key, _ in selector.select(timeout=0.5):
                sock = by_fd[key.fd]
                try:
                    chunk = sock.recv(4096)
                except ConnectionResetError:
                    chunk = b""
                if chunk:
                    received[sock] += chunk
                else:
                    selector.unregister(sock)
                    open_.discard(sock)
        assert not open_, f"{len(open_)} of {len(sockets)} sockets still open after {bound_s} s"
    return [received[sock] for sock in sockets]


def open_once_settled(server: Running) -> int:
    """The connections the guard counts open once the server has seen the closed ones go (it
    learns of a close on its own loop, a moment after the client's), waiting at most
    ANSWER_BOUND_S."""
    deadline = time.monotonic() + ANSWER_BOUND_S
    while server.guard.open and time.monotonic() < deadline:
        time.sleep(0.05)
    return server.guard.open


def healthz_status(server: Running) -> int:
    return httpx.get(f"{server.base}/healthz", timeout=ANSWER_BOUND_S).status_code


def test_a_thousand_slow_header_sockets_leave_healthz_answering_and_are_closed_after_the_timeout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="app.serving")
    # both ends of each socket are in this process: raise its open-file limit for them if it can
    half = min(SLOW_SOCKETS, connection_ceiling(2 * SLOW_SOCKETS) // 2) // 2
    assert half >= 100, "the open-file limit leaves too few descriptors for this test"
    with running(limits(header_timeout_s=2.0)) as server:
        idle = [server.connect() for _ in range(half)]  # connected, never a byte
        partial = [server.connect() for _ in range(half)]
        for sock in partial:  # a request line and one header, then nothing
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        try:
            assert healthz_status(server) == 200  # while all of them are held
            received = wait_closed(idle + partial, 2.0 + CLOSE_BOUND_S)
        finally:
            for sock in idle + partial:
                sock.close()
        assert not any(received), "a slow client got an answer to headers it never finished"
        assert healthz_status(server) == 200
        assert open_once_settled(server) == 0  # the health check's own connection closes after its answer
        assert _counted(server.guard, HEADER_TIMEOUT) == 2 * half
    logged = [r.getMessage() for r in caplog.records if r.name == "app.serving"]
    assert any("no complete request headers within 2 s" in line for line in logged), logged


def test_a_connection_over_the_per_address_cap_is_answered_503_and_closed_unread(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="app.serving")
    with running(limits(header_timeout_s=30.0, max_connections_per_address=8)) as server:
        held = [server.connect() for _ in range(8)]
        try:
            over = server.connect()
            (answer,) = wait_closed([over], ANSWER_BOUND_S)
            assert answer.startswith(b"HTTP/1.1 503 "), answer
            assert b"connection: close" in answer
        finally:
            for sock in held:
                sock.close()
        # the held ones gone, the address is served again
        open_once_settled(server)
        assert healthz_status(server) == 200
        assert _counted(server.guard, ADDRESS_CAP) == 1
    logged = [r.getMessage() for r in caplog.records if r.name == "app.serving"]
    assert any("MEMORIA_SERVER__MAX_CONNECTIONS_PER_ADDRESS" in line for line in logged), logged


def test_a_request_body_that_stalls_has_its_connection_closed() -> None:
    with running(limits(body_timeout_s=1.0)) as server:
        stalled = server.connect()
        try:
            stalled.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
            (answer,) = wait_closed([stalled], 1.0 + CLOSE_BOUND_S)
        finally:
            stalled.close()
        assert not answer.startswith(b"HTTP/1.1 200")
        assert _counted(server.guard, BODY_TIMEOUT) == 1
        # a body sent at once is unaffected
        done = httpx.post(f"{server.base}/echo", content=b"x" * 100_000, timeout=ANSWER_BOUND_S)
        assert done.json() == {"bytes": 100_000}


def test_a_kept_alive_connection_that_stalls_in_its_next_request_is_closed() -> None:
    with running(limits(header_timeout_s=1.0)) as server:
        sock = server.connect()
        try:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            first = b""
            while b'"ok"' not in first:
                chunk = sock.recv(4096)
                assert chunk, "closed before answering"
                first += chunk
            sock.sendall(b"GET /healthz HTTP/1.1\r\n")  # the next request, never finished
            (rest,) = wait_closed([sock], 1.0 + CLOSE_BOUND_S)
        finally:
            sock.close()
        assert first.startswith(b"HTTP/1.1 200")
        assert rest == b""
        assert _counted(server.guard, HEADER_TIMEOUT) == 1


async def test_trusted_proxies_are_held_to_the_overall_cap_only() -> None:
    guard = ConnectionGuard(
        ConnectionLimits(
            header_timeout_s=1,
            body_timeout_s=1,
            max_connections=5,
            max_connections_per_address=2,
            uncapped=(ipaddress.ip_network("10.0.0.0/8"),),
        )
    )
    assert [guard.admit("10.1.2.3") is not None for _ in range(5)] == [True] * 5
    assert guard.admit("10.1.2.3") is None  # the overall cap
    assert guard.admit("192.0.2.1") is None
    assert _counted(guard, SERVER_CAP) == 2
    capped = ConnectionGuard(ConnectionLimits(1, 1, max_connections=5, max_connections_per_address=2))
    assert [capped.admit("192.0.2.1") is not None for _ in range(3)] == [True, True, False]
    assert capped.admit("192.0.2.2") is not None  # another address has its own count


async def test_an_ipv6_client_counts_by_its_slash_64() -> None:
    guard = ConnectionGuard(ConnectionLimits(1, 1, max_connections=100, max_connections_per_address=2))
    assert guard.admit("2001:db8:1:2::1") is not None
    assert guard.admit("2001:db8:1:2::ffff") is not None
    assert guard.admit("2001:db8:1:2:abcd::1") is None
    assert guard.admit("2001:db8:1:3::1") is not None


async def test_released_connections_free_their_place() -> None:
    guard = ConnectionGuard(ConnectionLimits(1, 1, max_connections=2, max_connections_per_address=1))
    first = guard.admit("192.0.2.1")
    assert first is not None
    assert guard.admit("192.0.2.1") is None
    guard.release(first)
    assert guard.open == 0
    assert guard.admit("192.0.2.1") is not None


async def test_a_flood_of_refusals_is_one_log_line_and_one_summary_per_interval(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="app.serving")
    guard = ConnectionGuard(
        ConnectionLimits(1, 1, max_connections=1, max_connections_per_address=0), BurstLog(interval_s=0.2)
    )
    assert guard.admit("192.0.2.1") is not None
    for _ in range(100):
        assert guard.admit("192.0.2.7") is None
    assert len(caplog.records) == 1
    assert "refused a connection from 192.0.2.7" in caplog.records[0].getMessage()
    await asyncio.sleep(0.5)
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 2, lines
    assert lines[1].startswith("99 more connections refused over the overall cap"), lines


async def test_the_guard_exposes_open_refused_and_timed_out_connections_as_metrics() -> None:
    guard = ConnectionGuard(ConnectionLimits(1, 1, max_connections=1, max_connections_per_address=0))
    assert guard.admit("192.0.2.1") is not None
    assert guard.admit("192.0.2.1") is None
    guard.timed_out(HEADER_TIMEOUT, "192.0.2.1")
    registry = CollectorRegistry()
    registry.register(guard)
    text = generate_latest(registry).decode()
    assert "memoria_connections_open 1.0" in text
    assert 'memoria_connections_refused_total{reason="server_cap"} 1.0' in text
    assert 'memoria_connections_refused_total{reason="address_cap"} 0.0' in text
    assert 'memoria_connections_timed_out_total{reason="header_timeout"} 1.0' in text


def test_the_connection_cap_fits_in_the_open_file_limit() -> None:
    import resource

    assert connection_ceiling(100) == 100
    huge = connection_ceiling(10**9)  # more than any limit: lowered to what the limit leaves
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert huge == max(soft // 2, soft - FD_RESERVE)


def _counted(guard: ConnectionGuard, reason: str) -> int:
    for metric in guard.collect():
        for sample in metric.samples:
            if sample.labels.get("reason") == reason and sample.name.endswith("_total"):
                return int(sample.value)
    raise AssertionError(f"no {reason} counter")
