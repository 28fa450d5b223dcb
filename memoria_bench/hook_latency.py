"""What the auto-recall hook adds to each prompt, measured from the outside (`memoria bench hook`).

Three figures, each a different question:

- the HTTP hook endpoint (what an `http` hook costs): one POST per prompt on a fresh connection,
  the worst case (Claude Code may not reuse connections), so connection setup is counted;
- the command hook process with the server up (what a `command` hook costs): spawn, Python
  start-up, the POST, output, exit, exactly the command `memoria hook install --mode command` writes;
- the command hook with the server down: how much a dead server costs each prompt (fail-open path).

Every prompt is different, also from earlier runs', because the server caches query vectors and a
repeated prompt would measure the cache. Point `--url`/`--key`/`--namespace` at any server, e.g. a
100k-memory one. The command itself (options, output) is `memoria_bench.cli.hook`.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from app.core.net import free_port
from app.core.stats import latency_summary
from app.hooks import install_gemini, install_opencode, install_qwen
from app.hooks.hosts import CLAUDE_CODE, Host
from app.hooks.install import COMMAND_TIMEOUT_S, command_hook
from app.hooks.routes import OUTCOME_HEADER
from memoria_hook_client.environment import ENV_API_KEY, ENV_HOOK_BUDGET, ENV_HOOK_LOG

#: The columns of each measured row, in order.
COLUMNS = ("measure", "runs", "p50_ms", "p95_ms", "max_ms", "note")
#: What a development or CI shell sets and a person's machine does not (`hook_environment`).
PYTHON_DEV_VARIABLES = ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")
#: The row the targets judge: the prompt hook as the host runs it.
HOOK_ROW = "command hook, server up"
#: Issue #37's targets for the prompt hook: its p95, process start to output, on an idle machine; and
#: the host's timeout at least this many times that p95.
TARGET_P95_MS = 50.0
TARGET_HEADROOM = 10.0
#: The timeout `memoria hook install --agent <host>` gives the prompt hook, in ms (Gemini CLI and
#: Qwen Code read milliseconds, Claude Code and Codex seconds).
PROMPT_HOOK_TIMEOUT_MS: dict[str, float] = {
    "claude-code": COMMAND_TIMEOUT_S * 1000.0,
    "codex": COMMAND_TIMEOUT_S * 1000.0,
    "gemini": float(install_gemini.COMMAND_TIMEOUT_MS),
    "qwen": float(install_qwen.COMMAND_TIMEOUT_MS),
    "opencode": float(install_opencode.TIMEOUT_MS),
    "copilot": COMMAND_TIMEOUT_S * 1000.0,
    # Cursor's prompt event cannot add context and gets no hook; its one hook, sessionStart, has the
    # same client and the same timeout in seconds, which is what the headroom is judged against.
    "cursor": COMMAND_TIMEOUT_S * 1000.0,
}


class BenchFailed(Exception):
    """The server is not there, not ready, or the hook process failed; the message says which."""


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


def event(prompt: str, cwd: str, host: Host = CLAUDE_CODE) -> dict[str, Any]:
    """A prompt of a new session each time: the server's per-session ledger would otherwise leave
    out of later prompts what earlier ones were given, and the runs would not measure alike. Named
    as `host` names its prompt event (the payload's other fields are alike)."""
    return {
        "session_id": f"bench-{secrets.token_hex(8)}",
        "transcript_path": os.devnull,
        "cwd": cwd,
        "hook_event_name": host.prompt_event,
        "prompt": prompt,
    }


def latency_row(measure: str, millis: list[float], note: str) -> dict[str, Any]:
    """One row of the hook bench's table: what was measured, its latency percentiles, the outcomes."""
    stats = latency_summary(millis)
    return {
        "measure": measure,
        "runs": len(millis),
        "p50_ms": round(stats["p50"], 1),
        "p95_ms": round(stats["p95"], 1),
        "max_ms": round(stats["max"], 1),
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


def bench_endpoint(
    url: str, key: str, cwd: str, namespace: str | None, runs: int, warmup: int, host: Host = CLAUDE_CODE
) -> dict[str, Any]:
    texts = iter(prompts(runs + warmup))
    path = f"/v1/hooks/{host.name}/user-prompt-submit"
    params = {"namespace": namespace} if namespace else {}
    headers = {"Authorization": f"Bearer {key}", "Connection": "close"}
    with httpx.Client(base_url=url, timeout=10) as http:

        def once() -> str:
            response = http.post(path, json=event(next(texts), cwd, host), params=params, headers=headers)
            response.raise_for_status()
            outcome: str = response.headers.get(OUTCOME_HEADER, "?")
            return outcome.split(":")[0]

        millis, outcomes = timed(once, runs, warmup)
    return latency_row("http endpoint", millis, _describe(outcomes))


def bench_process(
    name: str,
    url: str,
    key: str,
    cwd: str,
    namespace: str | None,
    runs: int,
    warmup: int,
    log: Path,
    host: Host = CLAUDE_CODE,
) -> dict[str, Any]:
    argv = shlex.split(command_hook(url, namespace, agent=host.name)["command"])
    env = hook_environment(key, log)
    texts = iter(prompts(runs + warmup))

    def once() -> str:
        payload = json.dumps(event(next(texts), cwd, host)).encode()
        done = subprocess.run(argv, input=payload, capture_output=True, env=env, timeout=30, check=False)
        if done.returncode != 0:
            raise BenchFailed(f"the command hook exited {done.returncode}: {done.stderr[-300:]!r}")
        return "injected" if done.stdout.strip() else "empty"

    millis, outcomes = timed(once, runs, warmup)
    return latency_row(name, millis, _describe(outcomes))


def hook_environment(key: str, log: Path) -> dict[str, str]:
    """The environment a coding agent gives its hook: the user's, with the key and a log; as on a
    person's machine, bytecode caching on (a CI or container shell's PYTHONDONTWRITEBYTECODE would
    make every run compile the hook's modules again, a cost no user pays) and no PYTHONPATH (a
    development checkout's would add a folder every import of the hook looks in; the launcher finds
    its own checkout); no hook budget override."""
    dropped = (ENV_HOOK_BUDGET, *PYTHON_DEV_VARIABLES)
    env = {name: value for name, value in os.environ.items() if name not in dropped}
    return env | {ENV_API_KEY: key, ENV_HOOK_LOG: str(log)}


def _describe(outcomes: Counter[str]) -> str:
    return ", ".join(f"{name} {count}" for name, count in outcomes.most_common())


def bench_hook_latency(
    url: str, key: str, cwd: str, namespace: str | None, runs: int, warmup: int, host: Host = CLAUDE_CODE
) -> list[dict[str, Any]]:
    """The three rows for `host`'s prompt hook: the endpoint, the command hook with the server up,
    and with it down."""
    try:
        ready = httpx.get(f"{url}/readyz", timeout=5)
    except httpx.HTTPError as exc:
        raise BenchFailed(f"cannot reach Memoria at {url}: {exc}") from exc
    if ready.status_code != 200:
        raise BenchFailed(f"Memoria at {url} is not ready: {ready.text[:200]}")
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "hook.log"
        down = f"http://127.0.0.1:{free_port()}"
        return [
            bench_endpoint(url, key, cwd, namespace, runs, warmup, host),
            bench_process("command hook, server up", url, key, cwd, namespace, runs, warmup, log, host),
            bench_process("command hook, server down", down, key, cwd, namespace, runs, warmup, log, host),
        ]


def hook_targets(agent: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The prompt hook's p95 against its target, and the host's timeout over that p95 (the headroom)
    against its target; a host whose timeout the bench does not know has no headroom check."""
    p95 = next(float(row["p95_ms"]) for row in rows if row["measure"] == HOOK_ROW)
    checks: list[dict[str, Any]] = [
        {"target": f"{HOOK_ROW}: p95 <= {TARGET_P95_MS:g} ms", "value": p95, "met": p95 <= TARGET_P95_MS}
    ]
    timeout_ms = PROMPT_HOOK_TIMEOUT_MS.get(agent)
    if timeout_ms is not None:
        headroom = round(timeout_ms / p95, 1) if p95 > 0 else float("inf")
        checks.append(
            {
                "target": f"timeout {timeout_ms:g} ms / p95 >= {TARGET_HEADROOM:g}x",
                "value": headroom,
                "met": headroom >= TARGET_HEADROOM,
            }
        )
    return checks
