"""One soak run: a server on its own embedded PostgreSQL, the clients, the monitor, the checks."""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

from app.core.stats import latency_summary
from memoria_bench.corpus import load_pool
from memoria_bench.serve import ServedApi, memoria_command, served_api
from memoria_bench.soak.load import (
    RECALL,
    STORE,
    Sample,
    Workload,
    client_loop,
    missing_acknowledged,
    preload,
)
from memoria_bench.soak.options import SoakOptions
from memoria_bench.soak.outage import kill_postmaster, ok, outage
from memoria_bench.soak.report import minute_line, minute_row, rss_growth, targets

RECOVERY_WAIT_S = 120  # after a kill, how long the checks wait for the service to answer again
# The server owns its embedded PostgreSQL here, as `make run` does: no URL may point elsewhere.
_UNSET = ("MEMORIA_DATABASE__URL", "MEMORIA_DATABASE__READ_URL")


@contextmanager
def _data_dir(chosen: Path | None) -> Iterator[Path]:
    if chosen is not None:
        yield chosen
        return
    with tempfile.TemporaryDirectory(prefix="memoria-soak-") as tmp:
        os.chmod(tmp, 0o755)  # noqa: S103 - the embedded server runs as another user when we are root
        yield Path(tmp) / "pgdata"


async def _api_key(env: dict[str, str]) -> str:
    """A key from `memoria keys create`, which joins the running embedded server."""
    full_env = {**os.environ, **env}
    for name in _UNSET:
        full_env.pop(name, None)
    proc = await asyncio.create_subprocess_exec(
        *memoria_command("keys", "create", "--user", "soak", "--create-user"),
        env=full_env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    if proc.returncode != 0:
        raise RuntimeError(f"memoria keys create failed: {err.decode(errors='replace')[-500:]}")
    return out.decode().strip()


def _rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


@asynccontextmanager
async def _monitor(
    api: ServedApi, samples: list[Sample], began: float, console: Console
) -> AsyncIterator[tuple[list[tuple[float, float]], list[dict[str, Any]]]]:
    """Sample the server's RSS every second and print each minute's line once the minute is over."""
    rss: list[tuple[float, float]] = []
    rows: list[dict[str, Any]] = []

    async def watch() -> None:
        printed = 0
        while True:
            elapsed = time.monotonic() - began
            mb = _rss_mb(api.pid)
            if mb is not None:
                rss.append((elapsed, mb))
            while elapsed >= (printed + 1) * 60:
                rows.append(minute_row(samples, printed, rss[-1][1] if rss else None))
                console.print(minute_line(rows[-1]))
                printed += 1
            await asyncio.sleep(1.0)

    task = asyncio.create_task(watch())
    try:
        yield rss, rows
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        elapsed = time.monotonic() - began
        done = len(rows)
        if elapsed > done * 60 + 1:  # the last, partial minute
            rows.append(minute_row(samples, done, rss[-1][1] if rss else None))
            console.print(minute_line(rows[-1]) + " (partial)")


async def _kill_later(data_dir: Path, began: float, at_s: float, console: Console) -> float:
    await asyncio.sleep(max(0.0, began + at_s - time.monotonic()))
    pid = kill_postmaster(data_dir)
    killed = time.monotonic() - began
    console.print(f"killed PostgreSQL (postmaster {pid}) with SIGKILL at {killed:.1f} s")
    return killed


async def _wait_answering(client: httpx.AsyncClient) -> None:
    deadline = time.monotonic() + RECOVERY_WAIT_S
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if (await client.get("/v1/namespaces")).status_code == 200:
                return
        await asyncio.sleep(0.5)
    raise RuntimeError(f"the service did not answer again within {RECOVERY_WAIT_S} s")


def _totals(samples: list[Sample], duration_s: float) -> dict[str, dict[str, Any]]:
    totals: dict[str, dict[str, Any]] = {}
    for op in (STORE, RECALL):
        these = [s for s in samples if s.op == op]
        good = [s.ms for s in these if ok(s)]
        totals[op] = {**latency_summary(good, duration_s), "n": len(these), "errors": len(these) - len(good)}
    return totals


def error_statuses(samples: list[Sample]) -> dict[str, int]:
    """The failed requests by HTTP status ("0": no answer came), so a 500 is told from the 503 an
    outage is answered with."""
    counted = Counter(str(s.status) for s in samples if not ok(s))
    return dict(sorted(counted.items()))


async def bench_soak(options: SoakOptions, console: Console) -> dict[str, Any]:
    """Run the soak and return its report (the minute lines are printed as they complete)."""
    work = Workload.build(load_pool(options.sentences), options.namespaces, options.store_share)
    with _data_dir(options.data_dir) as data_dir:
        env = {"MEMORIA_DATABASE__DATA_DIR": str(data_dir)}
        async with served_api(env, unset=_UNSET) as api:
            key = await _api_key(env)
            limits = httpx.Limits(max_connections=options.clients, max_keepalive_connections=options.clients)
            async with httpx.AsyncClient(
                base_url=api.base, headers={"Authorization": f"Bearer {key}"},
                timeout=options.request_timeout_s, limits=limits,
            ) as client:  # fmt: skip
                await preload(client, work, options.preload)
                corpus_start = len(work.acknowledged)
                console.print(
                    f"soak: {options.clients} clients for {options.duration_s:.0f} s on {api.base} "
                    f"(server pid {api.pid}), {corpus_start} memories preloaded"
                )
                began = time.monotonic()
                until = began + options.duration_s
                killer = (
                    asyncio.create_task(_kill_later(data_dir, began, options.kill_postgres_at_s, console))
                    if options.kill_postgres_at_s is not None
                    else None
                )
                async with _monitor(api, work.samples, began, console) as (rss, rows):
                    await asyncio.gather(
                        *(client_loop(client, work, began, until) for _ in range(options.clients))
                    )
                kill_at_s = await killer if killer is not None else None
                await _wait_answering(client)
                missing = await missing_acknowledged(client, work.acknowledged)
            server_errors = list(api.errors)
    errors = sum(1 for s in work.samples if not ok(s))
    report: dict[str, Any] = {
        "duration_s": options.duration_s,
        "clients": options.clients,
        "store_share": options.store_share,
        "corpus_start": corpus_start,
        "corpus_end": len(work.acknowledged),
        "minutes": rows,
        "totals": _totals(work.samples, options.duration_s),
        "errors": errors,
        "error_statuses": error_statuses(work.samples),
        "rss": rss_growth(rss, options.warmup_s),
        "outage": outage(work.samples, kill_at_s) if kill_at_s is not None else None,
        "acknowledged": len(work.acknowledged),
        "lost_writes": len(missing),
        "lost_ids": missing[:20],
        "server_error_lines": server_errors,
    }
    report["targets"] = targets(report)
    return report
