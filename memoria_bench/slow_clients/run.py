"""The slow-clients bench: attackers hold slow sockets while a prober times other clients' requests.

One `memoria serve` (its own settings: default connection limits) on a scratch database, one user
with a handful of memories. Attacking processes (`attack`) open `sockets` connections from
`source` (127.0.0.2 by default: one address, not the prober's) as fast as they can, each sending an
unfinished request, and hold them `hold_s` seconds. Meanwhile the prober, from 127.0.0.1, sends
`GET /healthz` and a `POST /v1/recall` every `probe_interval_s`, each on a new connection, and times
each from its connect to the last byte of the answer.

The prober speaks HTTP/1.1 over a plain socket rather than through an HTTP client library: a new
client object per probe costs the prober tens of milliseconds of its own CPU (a TLS context, even for
http://), which under the attackers' load on a small machine grows into what would look like the
server's latency.

The targets are #36's: every probe answered 200 within 1 s, and every attacking socket closed by the
server before the hold ended (refused at once over the per-address cap, or closed at the header
timeout).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any

import asyncpg
import httpx
from rich.console import Console
from rich.table import Table

from app.auth.service import create_key, get_or_create_user
from app.core.stats import latency_summary
from memoria_bench.serve import served_api

PER_PROCESS = 10_000
"""Sockets one attacking process holds (fewer than a default 20,000-descriptor hard limit)."""
PROBE_TIMEOUT_S = 10.0
ANSWER_WITHIN_S = 1.0
METRICS_TOKEN = "slow-clients-bench-scrape-token"  # noqa: S105 - the scratch server's own
NAMESPACE = "bench-slow-clients"
MEMORIES = (
    "Deploy the service with make deploy after the tests pass.",
    "The staging database is refreshed every Sunday night.",
    "Use ruff for linting and formatting Python code.",
)
QUERY = "how do we deploy the service"


@dataclass(frozen=True, slots=True)
class SlowClientsOptions:
    sockets: int = 20_000
    source: str = "127.0.0.2"
    hold_s: float = 40.0
    probe_interval_s: float = 0.25
    settle_s: float = 5.0  # probing goes on this long after the hold ends


async def _bench_key(url: str) -> str:
    conn = await asyncpg.connect(url)
    try:
        await get_or_create_user(conn, "bench-slow-clients")
        return (await create_key(conn, "bench-slow-clients", label="bench slow-clients")).key
    finally:
        await conn.close()


def _requests(key: str) -> dict[str, bytes]:
    body = json.dumps({"query": QUERY, "namespace": NAMESPACE, "limit": 5}).encode()
    recall = (
        "POST /v1/recall HTTP/1.1\r\nHost: memoria\r\nConnection: close\r\n"
        f"Content-Type: application/json\r\nAuthorization: Bearer {key}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    healthz = b"GET /healthz HTTP/1.1\r\nHost: memoria\r\nConnection: close\r\n\r\n"
    return {"healthz": healthz, "recall": recall}


async def _probe_once(host: str, port: int, request: bytes) -> tuple[bool, float]:
    """(answered 200, seconds from connect to the answer's last byte)."""
    started = time.monotonic()
    try:
        async with asyncio.timeout(PROBE_TIMEOUT_S):
            reader, writer = await asyncio.open_connection(host, port)
            try:
                writer.write(request)
                answer = await reader.read()
            finally:
                writer.close()
    except (OSError, TimeoutError):
        return False, time.monotonic() - started
    return answer.startswith(b"HTTP/1.1 200 "), time.monotonic() - started


async def _probe(host: str, port: int, key: str, options: SlowClientsOptions) -> dict[str, Any]:
    requests = _requests(key)
    samples: dict[str, list[tuple[float, float, bool]]] = {name: [] for name in requests}
    started = time.monotonic()
    until = started + options.hold_s + options.settle_s

    async def one(name: str) -> None:
        at = time.monotonic() - started
        ok, seconds = await _probe_once(host, port, requests[name])
        samples[name].append((at, seconds, ok))

    pending: list[asyncio.Task[None]] = []
    while time.monotonic() < until:
        pending += [asyncio.create_task(one(name)) for name in requests]
        await asyncio.sleep(options.probe_interval_s)
    await asyncio.gather(*pending)
    return {
        name: {
            "latency_ms": latency_summary([s[1] * 1000 for s in taken]),
            "failed": sum(not s[2] for s in taken),
            "over_1s": sum(s[1] > ANSWER_WITHIN_S for s in taken),
            "slowest": [
                {"at_s": round(s[0], 2), "ms": round(s[1] * 1000, 1)}
                for s in sorted(taken, key=lambda s: -s[1])[:3]
            ],
        }
        for name, taken in samples.items()
    }


async def _attackers(host: str, port: int, options: SlowClientsOptions) -> list[asyncio.subprocess.Process]:
    processes = max(1, math.ceil(options.sockets / PER_PROCESS))
    shares = [options.sockets // processes + (i < options.sockets % processes) for i in range(processes)]
    return [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "memoria_bench.slow_clients.attack",
            host,
            str(port),
            str(share),
            options.source,
            str(options.hold_s),
            stdout=asyncio.subprocess.PIPE,
        )
        for share in shares
    ]


async def _attack_results(processes: list[asyncio.subprocess.Process], bound_s: float) -> dict[str, Any]:
    results = []
    for process in processes:
        out, _ = await asyncio.wait_for(process.communicate(), bound_s)
        results.append(json.loads(out.decode().strip().splitlines()[-1]))
    failed: dict[str, int] = {}
    for result in results:
        for kind, n in result["failed"].items():
            failed[kind] = failed.get(kind, 0) + n
    return {
        "processes": len(results),
        "opened": sum(r["opened"] for r in results),
        "failed": failed,
        "open_seconds_max": max(r["open_seconds"] for r in results),
        "closed_by_server": sum(r["closed_by_server"] for r in results),
    }


async def _server_counters(base: str) -> dict[str, float]:
    async with httpx.AsyncClient(timeout=PROBE_TIMEOUT_S) as client:
        answer = await client.get(f"{base}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
        text = answer.text
    wanted = ("memoria_connections_refused_total", "memoria_connections_timed_out_total")
    return {line.split()[0]: float(line.split()[-1]) for line in text.splitlines() if line.startswith(wanted)}


async def bench_slow_clients(url: str, options: SlowClientsOptions, console: Console) -> dict[str, Any]:
    key = await _bench_key(url)
    env = {"MEMORIA_DATABASE__URL": url, "MEMORIA_METRICS__TOKEN": METRICS_TOKEN}
    async with served_api(env, "--no-migrate", unset=["MEMORIA_DATABASE__READ_URL"]) as api:
        headers = {"Authorization": f"Bearer {key}"}
        async with httpx.AsyncClient(base_url=api.base, headers=headers, timeout=60) as client:
            stored = await client.post(
                "/v1/memories", json=[{"content": c, "namespace": NAMESPACE} for c in MEMORIES]
            )
            stored.raise_for_status()
        host, port = "127.0.0.1", int(api.base.rsplit(":", 1)[1])
        console.print(f"{options.sockets} slow sockets from {options.source}, held {options.hold_s:g} s")
        attackers = await _attackers(host, port, options)
        probes = await _probe(host, port, key, options)
        attack = await _attack_results(attackers, options.hold_s + 60)
        counters = await _server_counters(api.base)
    probed = list(probes.values())
    return {
        "bench": "slow-clients",
        "options": asdict(options),
        "attack": attack,
        "probes": probes,
        "server_counters": counters,
        "machine": {"cpus": os.cpu_count(), "loadavg_end": os.getloadavg()},
        "targets": [
            {
                "target": "healthz and recall answered 200 within 1 s throughout",
                "met": all(p["failed"] == 0 and p["over_1s"] == 0 for p in probed),
            },
            {
                "target": "every attacking socket closed by the server before the hold ended",
                "met": attack["opened"] > 0 and attack["closed_by_server"] == attack["opened"],
            },
        ],
    }


def print_report(report: dict[str, Any], console: Console) -> None:
    attack = report["attack"]
    console.print(
        f"attack: {attack['opened']} sockets opened from {report['options']['source']} by "
        f"{attack['processes']} processes in {attack['open_seconds_max']} s, failed {attack['failed']}; "
        f"closed by the server within the hold: {attack['closed_by_server']}"
    )
    table = Table(title="probes from another address, each on a new connection")
    for column in ("probe", "n", "failed", "p50 ms", "p95 ms", "p99 ms", "max ms", "over 1 s"):
        table.add_column(column, justify="left" if column == "probe" else "right")
    for name, probe in report["probes"].items():
        latency = probe["latency_ms"]
        table.add_row(
            name,
            str(int(latency["n"])),
            str(probe["failed"]),
            *(str(latency[q]) for q in ("p50", "p95", "p99", "max")),
            str(probe["over_1s"]),
        )
    console.print(table)
    for name, value in report["server_counters"].items():
        console.print(f"{name} {value:g}")
    for target in report["targets"]:
        console.print(f"{'met' if target['met'] else 'MISSED'}: {target['target']}")
