"""`memoria bench hook`: what the auto-recall hook adds to each prompt, measured from the outside.

Three figures, each a different question:

- the HTTP hook endpoint (what an `http` hook costs): one POST per prompt on a fresh connection,
  the worst case (Claude Code may not reuse connections), so connection setup is counted;
- the command hook process with the server up (what a `command` hook costs): spawn, Python
  start-up, the POST, output, exit, exactly the command `memoria hook install --mode command` writes;
- the command hook with the server down: how much a dead server costs each prompt (fail-open path).

Every prompt is different, also from earlier runs', because the server caches query vectors and a
repeated prompt would measure the cache. Point `--url`/`--key`/`--namespace` at any server, e.g. a
100k-memory one.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import httpx
from rich.console import Console
from rich.table import Table

from app.client.config import api_key, load_settings
from app.hooks.command import ENV_API_KEY, ENV_BUDGET, ENV_LOG, HOOK_PATH
from app.hooks.install import command_hook
from app.hooks.routes import OUTCOME_HEADER

TOPICS = [
    "How do we deploy the service to production",
    "Which database migrations still need a review",
    "What did we decide about the frontend package manager",
    "Why does the nightly integration test fail",
    "Where are the credentials for the staging cluster documented",
    "What is the release process for a hotfix",
    "How should new API endpoints be versioned",
    "Who owns the billing service on-call rotation",
]


def prompts(count: int) -> list[str]:
    """Distinct from each other and from any earlier run's (the server's query cache outlives a run)."""
    salt = secrets.token_hex(4)
    return [f"{TOPICS[i % len(TOPICS)]} (question {i} of {salt})?" for i in range(count)]


def event(prompt: str, cwd: str) -> dict[str, Any]:
    return {
        "session_id": "bench",
        "transcript_path": os.devnull,
        "cwd": cwd,
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }


def summary(name: str, millis: list[float], note: str) -> dict[str, Any]:
    cuts = statistics.quantiles(millis, n=100, method="inclusive") if len(millis) > 1 else millis * 99
    return {
        "measure": name,
        "runs": len(millis),
        "p50_ms": round(statistics.median(millis), 1),
        "p95_ms": round(cuts[94], 1),
        "max_ms": round(max(millis), 1),
        "note": note,
    }


def timed(work: Callable[[], str], runs: int, warmup: int) -> tuple[list[float], Counter[str]]:
    outcomes: Counter[str] = Counter()
    millis: list[float] = []
    for i in range(warmup + runs):
        start = time.perf_counter()
        outcome = work()
        elapsed = (time.perf_counter() - start) * 1000
        if i >= warmup:
            millis.append(elapsed)
            outcomes[outcome] += 1
    return millis, outcomes


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def bench_endpoint(
    url: str, key: str, cwd: str, namespace: str | None, runs: int, warmup: int
) -> dict[str, Any]:
    texts = iter(prompts(runs + warmup))
    params = {"namespace": namespace} if namespace else {}
    headers = {"Authorization": f"Bearer {key}", "Connection": "close"}
    with httpx.Client(base_url=url, timeout=10) as http:

        def once() -> str:
            response = http.post(HOOK_PATH, json=event(next(texts), cwd), params=params, headers=headers)
            response.raise_for_status()
            outcome: str = response.headers.get(OUTCOME_HEADER, "?")
            return outcome.split(":")[0]

        millis, outcomes = timed(once, runs, warmup)
    return summary("http endpoint", millis, _describe(outcomes))


def bench_process(
    name: str, url: str, key: str, cwd: str, namespace: str | None, runs: int, warmup: int, log: Path
) -> dict[str, Any]:
    argv = shlex.split(command_hook(url, namespace)["command"])
    env = {**os.environ, ENV_API_KEY: key, ENV_LOG: str(log)}
    env.pop(ENV_BUDGET, None)
    texts = iter(prompts(runs + warmup))

    def once() -> str:
        payload = json.dumps(event(next(texts), cwd)).encode()
        done = subprocess.run(argv, input=payload, capture_output=True, env=env, timeout=30, check=False)
        if done.returncode != 0:
            raise click.ClickException(f"the command hook exited {done.returncode}: {done.stderr[-300:]!r}")
        return "injected" if done.stdout.strip() else "empty"

    millis, outcomes = timed(once, runs, warmup)
    return summary(name, millis, _describe(outcomes))


def _describe(outcomes: Counter[str]) -> str:
    return ", ".join(f"{name} {count}" for name, count in outcomes.most_common())


@click.command("hook")
@click.option("--url", help="Server base URL (default: MEMORIA_CLIENT__URL).")
@click.option("--key", help="API key (default: MEMORIA_CLIENT__API_KEY or the key file).")
@click.option("--namespace", help="Recall from this namespace (default: the server derives it from --cwd).")
@click.option("--cwd", default=os.getcwd, show_default="current directory", help="cwd sent in the event.")
@click.option("--runs", type=click.IntRange(2, 10_000), default=30, show_default=True)
@click.option("--warmup", type=click.IntRange(0, 100), default=3, show_default=True)
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), help="Also write JSON.")
def bench_hook(
    url: str | None,
    key: str | None,
    namespace: str | None,
    cwd: str,
    runs: int,
    warmup: int,
    json_out: Path | None,
) -> None:
    """p50/p95 of the hook endpoint and of the command hook process, server up and down."""
    client = load_settings().client
    url = (url or client.url).rstrip("/")
    key = key or api_key(client)
    try:
        ready = httpx.get(f"{url}/readyz", timeout=5)
    except httpx.HTTPError as exc:
        raise click.ClickException(f"cannot reach Memoria at {url}: {exc}") from exc
    if ready.status_code != 200:
        raise click.ClickException(f"Memoria at {url} is not ready: {ready.text[:200]}")
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "hook.log"
        rows = [
            bench_endpoint(url, key, cwd, namespace, runs, warmup),
            bench_process("command hook, server up", url, key, cwd, namespace, runs, warmup, log),
            bench_process(
                "command hook, server down",
                f"http://127.0.0.1:{_closed_port()}",
                key,
                cwd,
                namespace,
                runs,
                warmup,
                log,
            ),
        ]
    table = Table(title=f"memoria bench hook: {url}")
    for column in ("measure", "runs", "p50_ms", "p95_ms", "max_ms", "note"):
        table.add_column(column, justify="left" if column in ("measure", "note") else "right")
    for row in rows:
        table.add_row(*(str(row[column]) for column in row))
    Console().print(table)
    sys.stdout.flush()
    if json_out is not None:
        json_out.write_text(json.dumps(rows, indent=2) + "\n")
        click.echo(f"wrote {json_out}", err=True)
