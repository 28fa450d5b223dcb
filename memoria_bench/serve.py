"""A `memoria serve` process for benchmarks that measure over HTTP, on a free local port.

A separate process, not an in-process server, so the client's work does not share an event loop
(or a GIL) with the server it measures. It reads its settings from the environment like any
deployment; the caller adds what differs (a scratch database URL, or an embedded data directory).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections import deque
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from app.core.net import free_port

ERROR_CONTEXT_LINES = 60  # the lines kept after an ERROR line: its traceback
READY_TIMEOUT_S = 180  # the server loads (and may first export) the embedding model before /readyz
# The `memoria` command's own function, run by this interpreter (so by this checkout, whatever
# `memoria` is on the PATH); click reads its arguments from sys.argv[1:].
ENTRY_POINT = "import sys; from app.cli import main; sys.exit(main(prog_name='memoria'))"
REPO_ROOT = Path(__file__).resolve().parents[1]
# A benchmark measures the service, not its brakes: the per-key rate limit is set out of reach, so
# its bucket is still taken on every request (the cost is measured) but never refuses one.
BENCH_LIMITS = {"MEMORIA_AUTH__KEY_REQUESTS_PER_S": "1000000", "MEMORIA_AUTH__KEY_BURST": "1000000"}


@dataclass(slots=True)
class ServedApi:
    """A running `memoria serve`: where it answers, its pid, and the last lines it printed."""

    base: str
    pid: int
    tail: deque[str] = field(default_factory=lambda: deque(maxlen=40))
    errors: deque[str] = field(default_factory=lambda: deque(maxlen=400))
    """Each ERROR line it printed and the traceback after it, kept apart from the tail, which a burst
    of warnings (an outage answered 503) would push them out of."""


def memoria_command(*args: str) -> tuple[str, ...]:
    """argv that runs `memoria ARGS` with this interpreter and this checkout."""
    return (sys.executable, "-c", ENTRY_POINT, *args)


@asynccontextmanager
async def served_api(
    env: Mapping[str, str], *serve_args: str, unset: Sequence[str] = (), port: int | None = None
) -> AsyncIterator[ServedApi]:
    """`memoria serve SERVE_ARGS` with `env` over this process's environment (less the `unset`
    variables), on `port` (default: a free one); stopped (SIGTERM, then SIGKILL after 30 s) when the
    block ends."""
    port = port or free_port()
    full_env = {**os.environ, "MEMORIA_SERVER__LOG_LEVEL": "warning", **BENCH_LIMITS, **env}
    for name in unset:
        full_env.pop(name, None)
    full_env.setdefault("HF_HUB_OFFLINE", "1")
    command = memoria_command("serve", "--host", "127.0.0.1", "--port", str(port), *serve_args)
    proc = await asyncio.create_subprocess_exec(
        *command,
        cwd=REPO_ROOT,
        env=full_env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    served = ServedApi(base=f"http://127.0.0.1:{port}", pid=proc.pid)

    async def drain() -> None:
        assert proc.stdout is not None
        traceback_lines = 0
        async for raw in proc.stdout:
            line = raw.decode(errors="replace").rstrip()
            served.tail.append(line)
            if " ERROR " in line:
                traceback_lines = ERROR_CONTEXT_LINES
            elif traceback_lines:
                traceback_lines -= 1
            else:
                continue
            served.errors.append(line)

    drainer = asyncio.create_task(drain())
    try:
        await _wait_ready(served, proc)
        yield served
    finally:
        if proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 30)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        await drainer


async def _wait_ready(served: ServedApi, proc: asyncio.subprocess.Process) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    last = "no answer"
    async with httpx.AsyncClient(base_url=served.base, timeout=2.0) as client:
        while time.monotonic() < deadline:
            if proc.returncode is not None:
                raise RuntimeError("memoria serve exited:\n" + "\n".join(served.tail))
            try:
                response = await client.get("/readyz")
                if response.status_code == 200:
                    return
                last = f"{response.status_code} {response.text[:300]}"
            except httpx.TransportError as exc:
                last = repr(exc)
            await asyncio.sleep(0.25)
    raise RuntimeError(
        f"memoria serve was not ready in {READY_TIMEOUT_S} s (/readyz: {last}):\n" + "\n".join(served.tail)
    )
