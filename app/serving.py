"""How `memoria serve` holds its connections: read timeouts, connection caps, and the uvicorn it runs.

uvicorn bounds neither how long a client may take to send its request nor how many connections one
address may hold: an idle socket that never finishes its headers is kept for ever, so a few
thousand of them from one address used up the process's file descriptors and every new client,
health checks included, failed to connect. uvicorn's own `limit_concurrency` does not help, since
it is checked only once a request's headers are complete, which a slow client never reaches.

So the server runs uvicorn's own httptools protocol with a guard around it (no HTTP parsing of our
own: the guard only hooks the parser's callbacks):

- a connection that has not delivered a request's complete headers within `header_timeout_s`
  (from its opening, or from the first byte of each later request on it) is closed;
- a request whose body is not all in within `body_timeout_s` of its headers has its connection
  closed;
- at most `max_connections` are open, and at most `max_connections_per_address` from one client
  address (an IPv6 client by its /64, as the failed-authentication limit counts it); a connection
  over a cap is answered 503 and closed as soon as it is accepted, before anything is read. The
  addresses of `MEMORIA_AUTH__TRUSTED_PROXIES` (an ingress carries every client's connections) are
  held to the overall cap only.

Each refusal and each timeout is logged, a burst as one line plus one summary line per interval, so
a flood of connections cannot become a flood of log lines, and counted on `/metrics`.

The guard overrides the protocol's connection and parser callbacks (`connection_made`,
`on_message_begin`, `on_headers_complete`, ...), which are uvicorn's internals rather than its API:
tests/test_slow_clients.py runs this very server, so an upgrade that changes them fails there.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import uvicorn
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from uvicorn.config import STARTUP_FAILURE
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.utils import get_remote_addr

from app.auth.gate import Network, address_bucket
from app.settings import Settings

log = logging.getLogger(__name__)

FD_RESERVE = 256
"""File descriptors kept free of client connections: the database pools, model and log files."""

LISTEN_BACKLOG = 8192
"""Connections the kernel completes before the server accepts them (capped by `net.core.somaxconn`).
Under a burst of connections the server accepts more slowly than they arrive; a full queue drops the
next client's handshake, which it repeats only a second later."""

REPORT_INTERVAL_S = 10.0
"""A burst of refusals or timeouts of one kind is logged as its first line and one summary per interval."""

# why a connection was refused or closed: the `reason` label of the counters and the log's wording
ADDRESS_CAP = "address_cap"
SERVER_CAP = "server_cap"
HEADER_TIMEOUT = "header_timeout"
BODY_TIMEOUT = "body_timeout"
REFUSALS = (ADDRESS_CAP, SERVER_CAP)
TIMEOUTS = (HEADER_TIMEOUT, BODY_TIMEOUT)

_REFUSED_ANSWER = (
    b"HTTP/1.1 503 Service Unavailable\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"retry-after: 1\r\n"
    b"connection: close\r\n"
    b"content-length: 27\r\n"
    b"\r\n"
    b"too many connections open\r\n"
)


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout_s: float
    body_timeout_s: float
    max_connections: int
    max_connections_per_address: int  # 0: no per-address cap
    uncapped: tuple[Network, ...] = ()  # addresses held to the overall cap only (trusted proxies)

    @classmethod
    def from_settings(cls, settings: Settings) -> ConnectionLimits:
        server = settings.server
        return cls(
            header_timeout_s=server.header_timeout_s,
            body_timeout_s=server.body_timeout_s,
            max_connections=server.max_connections,
            max_connections_per_address=server.max_connections_per_address,
            uncapped=tuple(ipaddress.ip_network(p, strict=False) for p in settings.auth.trusted_proxies),
        )

    def describe(self) -> str:
        per_address = (
            f"{self.max_connections_per_address} from one address"
            + (" (trusted proxies: the overall cap only)" if self.uncapped else "")
            if self.max_connections_per_address
            else "no per-address cap"
        )
        return (
            f"connections: at most {self.max_connections} open, {per_address}; request headers within "
            f"{self.header_timeout_s:g} s, bodies within {self.body_timeout_s:g} s"
        )


_WHY = {
    ADDRESS_CAP: "refused a connection from {host}: {count} are open from this address "
    "(MEMORIA_SERVER__MAX_CONNECTIONS_PER_ADDRESS)",
    SERVER_CAP: "refused a connection from {host}: {count} are open (MEMORIA_SERVER__MAX_CONNECTIONS)",
    HEADER_TIMEOUT: "closed the connection from {host}: no complete request headers within {count:g} s "
    "(MEMORIA_SERVER__HEADER_TIMEOUT_S)",
    BODY_TIMEOUT: "closed the connection from {host}: the request body was not all in within {count:g} s "
    "(MEMORIA_SERVER__BODY_TIMEOUT_S)",
}


_SUMMARY = {
    ADDRESS_CAP: "connections refused over the per-address cap",
    SERVER_CAP: "connections refused over the overall cap",
    HEADER_TIMEOUT: "connections closed for late request headers",
    BODY_TIMEOUT: "connections closed for late request bodies",
}


@dataclass
class _Burst:
    more: int = 0
    last_host: str = ""


@dataclass
class BurstLog:
    """Logs the first event of a kind at once and the ones that follow within `interval_s` as one
    summary at its end; a kind still busy then opens the next interval."""

    interval_s: float = REPORT_INTERVAL_S
    _bursts: dict[str, _Burst] = field(default_factory=dict)

    def event(self, reason: str, host: str, count: float) -> None:
        burst = self._bursts.get(reason)
        if burst is not None:
            burst.more += 1
            burst.last_host = host
            return
        log.warning(_WHY[reason].format(host=host, count=count))
        self._open(reason)

    def _open(self, reason: str) -> None:
        self._bursts[reason] = _Burst()
        asyncio.get_running_loop().call_later(self.interval_s, self._close, reason)

    def _close(self, reason: str) -> None:
        burst = self._bursts.pop(reason)
        if burst.more:
            log.warning(
                "%d more %s in the last %g s (the last from %s)",
                burst.more,
                _SUMMARY[reason],
                self.interval_s,
                burst.last_host,
            )
            self._open(reason)


class ConnectionGuard:
    """The open connections of one server, by address: admits or refuses each new one, and is the
    Prometheus collector of what it did (`registry.register(guard)`)."""

    def __init__(self, limits: ConnectionLimits, burst_log: BurstLog | None = None) -> None:
        self.limits = limits
        self.open = 0
        self._by_address: Counter[str] = Counter()
        self._events: Counter[str] = Counter()
        self._log = burst_log if burst_log is not None else BurstLog()

    def admit(self, host: str | None) -> str | None:
        """The address `host` counts against while its connection is open (give it back with
        `release`); None when a cap refuses it (logged and counted)."""
        address = address_bucket(host)
        limits = self.limits
        if self.open >= limits.max_connections:
            self._record(SERVER_CAP, host, self.open)
            return None
        held = self._by_address[address]
        per_address = limits.max_connections_per_address
        if per_address and held >= per_address and not self._uncapped(host):
            self._record(ADDRESS_CAP, host, held)
            return None
        self.open += 1
        self._by_address[address] = held + 1
        return address

    def release(self, address: str) -> None:
        self.open -= 1
        left = self._by_address[address] - 1
        if left > 0:
            self._by_address[address] = left
        else:
            del self._by_address[address]

    def timed_out(self, reason: str, host: str | None) -> None:
        limit = self.limits.header_timeout_s if reason == HEADER_TIMEOUT else self.limits.body_timeout_s
        self._record(reason, host, limit)

    def _record(self, reason: str, host: str | None, count: float) -> None:
        self._events[reason] += 1
        self._log.event(reason, host or "an unknown address", count)

    def _uncapped(self, host: str | None) -> bool:
        if not self.limits.uncapped or not host:
            return False
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(ip in network for network in self.limits.uncapped)

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily("memoria_connections_open", "Open client connections", value=self.open)
        refused = CounterMetricFamily(
            "memoria_connections_refused",
            "Connections closed unread because a cap was reached: `address_cap` (one address's), "
            "`server_cap` (the overall one)",
            labels=["reason"],
        )
        for reason in REFUSALS:
            refused.add_metric([reason], self._events[reason])
        yield refused
        timed_out = CounterMetricFamily(
            "memoria_connections_timed_out",
            "Connections closed because a request's headers (`header_timeout`) or body "
            "(`body_timeout`) did not arrive in time",
            labels=["reason"],
        )
        for reason in TIMEOUTS:
            timed_out.add_metric([reason], self._events[reason])
        yield timed_out


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, admitted by a `ConnectionGuard` and with header and body read
    timeouts. `guarded_protocol(guard)` makes the subclass bound to one guard."""

    guard: ClassVar[ConnectionGuard]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._address: str | None = None  # set while admitted
        self._header_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        peer = get_remote_addr(transport)
        self._address = self.guard.admit(peer[0] if peer else None)
        if self._address is None:
            self.transport = transport
            transport.write(_REFUSED_ANSWER)
            transport.close()
            return
        super().connection_made(transport)
        self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._address is None:  # refused: uvicorn never saw it
            return
        self._cancel_timers()
        self.guard.release(self._address)
        self._address = None
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm_header_timer()  # a later request on a kept-alive connection: from its first byte

    def on_headers_complete(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        super().on_headers_complete()
        if self._body_timer is None:
            self._body_timer = self.loop.call_later(self.guard.limits.body_timeout_s, self._body_late)

    def on_message_complete(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None
        super().on_message_complete()

    def _arm_header_timer(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.guard.limits.header_timeout_s, self._headers_late)

    def _cancel_timers(self) -> None:
        for timer in (self._header_timer, self._body_timer):
            if timer is not None:
                timer.cancel()
        self._header_timer = self._body_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        self._close_for(HEADER_TIMEOUT)

    def _body_late(self) -> None:
        self._body_timer = None
        self._close_for(BODY_TIMEOUT)

    def _close_for(self, reason: str) -> None:
        if not self.transport.is_closing():
            self.guard.timed_out(reason, self.client[0] if self.client else None)
            self.transport.close()


def guarded_protocol(guard: ConnectionGuard) -> type[GuardedHttpToolsProtocol]:
    """The protocol class uvicorn instantiates per connection, admitted by `guard`."""
    return type("GuardedHttpToolsProtocol", (GuardedHttpToolsProtocol,), {"guard": guard})


def connection_ceiling(requested: int) -> int:
    """`requested`, lowered to what the open-file limit leaves beside `FD_RESERVE`; the soft limit is
    first raised towards the hard one as far as `requested` needs. Over the limit, `accept` fails
    (EMFILE) and the server stops accepting anyone, which a cap that is reached first prevents."""
    try:
        import resource
    except ImportError:  # not a POSIX system: nothing to read
        return requested
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = requested + FD_RESERVE
    if soft != resource.RLIM_INFINITY and soft < wanted:
        raised = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        if raised > soft:
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
                soft = raised
            except (ValueError, OSError):
                pass
    if soft == resource.RLIM_INFINITY:
        return requested
    return max(1, min(requested, max(soft // 2, soft - FD_RESERVE)))


def uvicorn_config(
    app: Any,
    guard: ConnectionGuard,
    *,
    host: str,
    port: int,
    keep_alive_s: int,
    log_level: str,
    shutdown_timeout_s: int | None = None,
) -> uvicorn.Config:
    """The server `memoria serve` runs (the tests run the same one in-process)."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        loop="uvloop",  # the C event loop and HTTP parser; the fallbacks (asyncio's loop, h11) are
        http=guarded_protocol(guard),  # slower Python, on the recall hot path
        ws="none",  # no WebSocket routes: an upgrade would move the connection out of the guard
        timeout_keep_alive=keep_alive_s,
        backlog=LISTEN_BACKLOG,
        timeout_graceful_shutdown=shutdown_timeout_s,
        log_config=None,  # configured by the caller: MEMORIA_SERVER__LOG_FORMAT, request ids
    )


def run(config: uvicorn.Config) -> None:
    """Serve until a signal, as `uvicorn.run` does for one worker; exit 3 if it never started."""
    server = uvicorn.Server(config)
    server.run()
    if not server.started:
        sys.exit(STARTUP_FAILURE)
