"""A `memoria serve` process for the HTTP figures, started on a free local port and stopped after.

A separate process, not an in-process server, so the client's work does not share an event loop
(or a GIL) with the server it measures. It reads its settings from the environment like any
deployment; only the database URL is the scratch one.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

from app.bench.latency.options import REPO_ROOT
from app.core.net import free_port

READY_TIMEOUT_S = 180  # the server loads (and may first export) the embedding model before /readyz
# The `memoria` command's own function, run by this interpreter (so by this checkout, whatever
# `memoria` is on the PATH); click reads its arguments from sys.argv[1:].
_ENTRY_POINT = "import sys; from app.cli import main; sys.exit(main(prog_name='memoria'))"


@asynccontextmanager
async def served_api(url: str) -> AsyncIterator[str]:
    """A `memoria serve` process against `url`; yields its base URL."""
    port = free_port()
    env = {**os.environ, "MEMORIA_DATABASE__URL": url, "MEMORIA_SERVER__LOG_LEVEL": "warning"}
    env.pop("MEMORIA_DATABASE__READ_URL", None)
    env.setdefault("HF_HUB_OFFLINE", "1")
    command = ("serve", "--host", "127.0.0.1", "--port", str(port), "--no-migrate")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _ENTRY_POINT, *command,
        cwd=REPO_ROOT, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    tail: deque[str] = deque(maxlen=40)

    async def drain() -> None:
        assert proc.stdout is not None
        async for line in proc.stdout:
            tail.append(line.decode(errors="replace").rstrip())

    drainer = asyncio.create_task(drain())
    base = f"http://127.0.0.1:{port}"
    try:
        await _wait_ready(base, proc, tail)
        yield base
    finally:
        if proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 30)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        await drainer


async def _wait_ready(base: str, proc: asyncio.subprocess.Process, tail: deque[str]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    last = "no answer"
    async with httpx.AsyncClient(base_url=base, timeout=2.0) as client:
        while time.monotonic() < deadline:
            if proc.returncode is not None:
                raise RuntimeError("memoria serve exited:\n" + "\n".join(tail))
            try:
                response = await client.get("/readyz")
                if response.status_code == 200:
                    return
                last = f"{response.status_code} {response.text[:300]}"
            except httpx.TransportError as exc:
                last = repr(exc)
            await asyncio.sleep(0.25)
    raise RuntimeError(
        f"memoria serve was not ready in {READY_TIMEOUT_S} s (/readyz: {last}):\n" + "\n".join(tail)
    )
