"""One attacking process: open N sockets from one source address, send each an unfinished request
line and header, hold them, and report (one JSON line on stdout) how many opened, how long that
took, and how many the server had closed by the end of the hold.

Run as `python -m memoria_bench.slow_clients.attack HOST PORT N SOURCE HOLD_S`, a process of its
own: its file descriptors are its own (it raises its soft limit to what it needs, within the hard
limit), and its CPU is not the probing process's.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import time

CONNECT_TIMEOUT_S = 10.0
IN_FLIGHT = 2000
"""Connections being opened at once: enough to open thousands a second, few enough that the
attacker's own event loop does not time its connects out."""
PARTIAL_REQUEST = b"GET /healthz HTTP/1.1\r\nHost: memoria\r\n"  # never finished by a blank line
FD_SPARE = 64


def raise_file_limit(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = needed + FD_SPARE
    if soft < wanted:
        limit = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))


async def attack(host: str, port: int, count: int, source: str, hold_s: float) -> dict[str, object]:
    held: list[asyncio.StreamWriter] = []
    closings: list[asyncio.Task[bytes]] = []
    failures: dict[str, int] = {}
    gate = asyncio.Semaphore(IN_FLIGHT)
    started = time.monotonic()

    async def open_one() -> None:
        async with gate:
            try:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(host, port, local_addr=(source, 0)), CONNECT_TIMEOUT_S
                )
            except (OSError, TimeoutError) as exc:
                failures[type(exc).__name__] = failures.get(type(exc).__name__, 0) + 1
                return
            writer.write(PARTIAL_REQUEST)
            held.append(writer)
            # whatever the server answers, then its end of the connection: done once it closed it
            closings.append(asyncio.create_task(reader.read()))

    await asyncio.gather(*(open_one() for _ in range(count)))
    opened_s = time.monotonic() - started
    await asyncio.sleep(max(0.0, hold_s - (time.monotonic() - started)))
    closed_by_server = sum(closing.done() and not closing.cancelled() for closing in closings)
    for closing in closings:
        closing.cancel()
    for writer in held:
        writer.close()
    await asyncio.gather(*closings, return_exceptions=True)
    return {
        "opened": len(held),
        "failed": failures,
        "open_seconds": round(opened_s, 2),
        "closed_by_server": closed_by_server,
    }


def main(argv: list[str]) -> None:
    host, port, count, source, hold_s = argv[0], int(argv[1]), int(argv[2]), argv[3], float(argv[4])
    raise_file_limit(count)
    print(json.dumps(asyncio.run(attack(host, port, count, source, hold_s))), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
