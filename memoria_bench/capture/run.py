"""`memoria bench capture`'s run: the served API, the corpus, each hook timed (the package docstring
says what and why)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from rich.console import Console
from rich.table import Table

from app.auth.service import create_key, get_or_create_user
from app.core.stats import latency_summary
from memoria_bench.capture.transcript import synthetic_transcript
from memoria_bench.corpus import generate_memories, load_pool
from memoria_bench.serve import REPO_ROOT, served_api
from memoria_hook_client.environment import ENV_API_KEY, ENV_HOOK_BUDGET, ENV_HOOK_LOG

NAMESPACE = "bench-capture"
BATCH = 100
HOOK_SCRIPT = REPO_ROOT / "scripts" / "memoria-hook"
SESSION_START_PATH = "/v1/hooks/claude-code/session-start"
STATE_DIR_ENV = "MEMORIA_CLIENT__STATE_DIR"
FLUSH_MODE_ENV = "MEMORIA_CLIENT__CAPTURE_FLUSH"
STORED_WAIT_S = 60.0
IDLE_WAIT_S = 300.0
POLL_S = 0.01
PROCESS_TIMEOUT_S = 60
#: The columns of each measured row, in order (as `memoria bench hook` prints them).
COLUMNS = ("measure", "runs", "p50_ms", "p95_ms", "max_ms", "note")
TARGET_CAPTURE_P95_MS = 100.0
TARGET_SESSION_START_P95_MS = 150.0
TARGET_ENDPOINT_P95_MS = 20.0

# Exchanges stored by one session: the first chunk of each turn (capture keys are
# "claude-code:<session_id>:<turn>:<chunk>"; the session ids here are UUIDs, no LIKE wildcards).
COUNT_STORED_TURNS = """
SELECT count(*)
FROM memories
WHERE capture_key LIKE $1
"""

# Episodes of one session still waiting for their embedding (the durable embedding job's work).
COUNT_UNEMBEDDED = """
SELECT count(*)
FROM memories
WHERE capture_key LIKE $1
  AND embedding IS NULL
"""

# Background work due now on memories (embedding, graph indexing); the periodic expiry job has no memory.
COUNT_PENDING_JOBS = """
SELECT count(*)
FROM jobs
WHERE memory_id IS NOT NULL
  AND state IN ('queued', 'running')
  AND run_after <= now()
"""

EndpointBench = Callable[[str, str, str, str | None, int, int], list[dict[str, Any]]]
"""`memoria_bench.hook_latency.bench_hook_latency`: (url, key, cwd, namespace, runs, warmup) → its rows."""


@dataclass(frozen=True, slots=True)
class CaptureBenchOptions:
    sentences: Path
    memories: int = 2000
    pinned: int = 5
    runs: int = 30
    warmup: int = 3
    exchanges: int = 200
    seed: int = 23


def _row(measure: str, millis: list[float], note: str) -> dict[str, Any]:
    stats = latency_summary(millis)
    return {
        "measure": measure,
        "runs": len(millis),
        "p50_ms": round(stats.get("p50", 0.0), 1),
        "p95_ms": round(stats.get("p95", 0.0), 1),
        "max_ms": round(stats.get("max", 0.0), 1),
        "note": note,
    }


def _describe(outcomes: Counter[str]) -> str:
    return ", ".join(f"{name} {count}" for name, count in outcomes.most_common())


async def _bench_key(url: str) -> str:
    conn = await asyncpg.connect(url)
    try:
        await get_or_create_user(conn, "bench-capture")
        return (await create_key(conn, "bench-capture", label="bench capture")).key
    finally:
        await conn.close()


async def _store(base: str, key: str, options: CaptureBenchOptions) -> None:
    pool = load_pool(options.sentences)
    memories = list(generate_memories(pool, options.memories, 1, options.seed))
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=base, timeout=300) as http:
        for start in range(0, len(memories), BATCH):
            body = [
                {
                    "content": m.content,
                    "namespace": NAMESPACE,
                    "category": m.category,
                    "tags": m.tags,
                    "importance": m.importance,
                    "pinned": start + i < options.pinned,
                }
                for i, m in enumerate(memories[start : start + BATCH])
            ]
            answer = await http.post("/v1/memories", json=body, headers=headers)
            if answer.status_code != 201:
                raise RuntimeError(f"store answered {answer.status_code}: {answer.text[:300]}")


def _hook_env(key: str, log: Path, state: Path | None = None) -> dict[str, str]:
    """The environment Claude Code gives a hook: the user's, with the key; the default flush mode; and
    bytecode caching on, as on a user's machine (a CI shell's PYTHONDONTWRITEBYTECODE would make every
    run compile the hook's modules again, a cost no user pays)."""
    dropped = (FLUSH_MODE_ENV, ENV_HOOK_BUDGET, "PYTHONDONTWRITEBYTECODE")
    env = {name: value for name, value in os.environ.items() if name not in dropped}
    env |= {ENV_API_KEY: key, ENV_HOOK_LOG: str(log)}
    if state is not None:
        env[STATE_DIR_ENV] = str(state)
    return env


def _hook_argv(sub: str, base: str) -> list[str]:
    return [sys.executable, "-S", str(HOOK_SCRIPT), sub, "--url", base, "--namespace", NAMESPACE]


def _spawn(argv: list[str], event: dict[str, Any], env: Mapping[str, str], cwd: str) -> tuple[float, str]:
    """Spawn to exit in ms, and what the process printed (a failing exit is a bench failure)."""
    payload = json.dumps(event).encode()
    began = time.perf_counter()
    done = subprocess.run(
        argv,
        input=payload,
        capture_output=True,
        env=dict(env),
        cwd=cwd,
        timeout=PROCESS_TIMEOUT_S,
        check=False,
    )
    elapsed = (time.perf_counter() - began) * 1000
    if done.returncode != 0:
        raise RuntimeError(f"{argv[3]} hook exited {done.returncode}: {done.stderr[-300:]!r}")
    return elapsed, done.stdout.decode(errors="replace")


async def bench_session_start(
    base: str, key: str, cwd: str, options: CaptureBenchOptions, log: Path
) -> list[dict[str, Any]]:
    """The `session-start` hook process, spawn to exit; and the route alone (one POST, new connection)."""
    env = _hook_env(key, log)
    millis: list[float] = []
    outcomes: Counter[str] = Counter()
    sizes: list[int] = []
    for i in range(options.warmup + options.runs):
        session = str(uuid.uuid4())
        event = {
            "session_id": session,
            "transcript_path": os.devnull,
            "cwd": cwd,
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
        elapsed, printed = await asyncio.to_thread(_spawn, _hook_argv("session-start", base), event, env, cwd)
        if i < options.warmup:
            continue
        millis.append(elapsed)
        context = _additional_context(printed)
        outcomes["injected" if context else "empty"] += 1
        sizes.append(len(context))
    longest = max(sizes, default=0)
    note = _describe(outcomes) + (f"; {longest} chars max" if longest else "")
    rows = [_row("session-start hook process", millis, note)]

    route_ms: list[float] = []
    route_outcomes: Counter[str] = Counter()
    headers = {"Authorization": f"Bearer {key}", "Connection": "close"}
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        for i in range(options.warmup + options.runs):
            event = {"session_id": str(uuid.uuid4()), "hook_event_name": "SessionStart", "source": "startup"}
            began = time.perf_counter()
            answer = await http.post(
                SESSION_START_PATH, json=event, params={"namespace": NAMESPACE}, headers=headers
            )
            elapsed = (time.perf_counter() - began) * 1000
            if answer.status_code != 200:
                raise RuntimeError(f"session-start answered {answer.status_code}: {answer.text[:300]}")
            if i >= options.warmup:
                route_ms.append(elapsed)
                route_outcomes[answer.headers.get("Memoria-Hook-Outcome", "?").split(":")[0]] += 1
    rows.append(_row("session-start endpoint", route_ms, _describe(route_outcomes)))
    return rows


def _additional_context(printed: str) -> str:
    try:
        answer = json.loads(printed) if printed.strip() else {}
    except ValueError:
        return ""
    specific = answer.get("hookSpecificOutput") if isinstance(answer, dict) else None
    context = specific.get("additionalContext") if isinstance(specific, dict) else None
    return context if isinstance(context, str) else ""


async def _wait_stored(conn: asyncpg.Connection, session_id: str, expected: int) -> int:
    """Poll until `expected` turns of `session_id` are stored (at most STORED_WAIT_S); the count seen."""
    deadline = time.monotonic() + STORED_WAIT_S
    pattern = f"claude-code:{session_id}:%:0"
    stored = 0
    while time.monotonic() < deadline:
        stored = int(await conn.fetchval(COUNT_STORED_TURNS, pattern))
        if stored >= expected:
            return stored
        await asyncio.sleep(POLL_S)
    return stored


async def _wait_embedded(conn: asyncpg.Connection, session_id: str) -> bool:
    """Poll until every episode of `session_id` has its embedding (at most STORED_WAIT_S)."""
    deadline = time.monotonic() + STORED_WAIT_S
    while time.monotonic() < deadline:
        if int(await conn.fetchval(COUNT_UNEMBEDDED, f"claude-code:{session_id}:%")) == 0:
            return True
        await asyncio.sleep(POLL_S)
    return False


async def wait_idle(url: str) -> int:
    """Wait (at most IDLE_WAIT_S) until the server has no background work due, so one measure does
    not pay for the previous one's embeddings; the jobs still pending."""
    conn = await asyncpg.connect(url)
    try:
        deadline = time.monotonic() + IDLE_WAIT_S
        pending = int(await conn.fetchval(COUNT_PENDING_JOBS))
        while pending and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
            pending = int(await conn.fetchval(COUNT_PENDING_JOBS))
        return pending
    finally:
        await conn.close()


async def bench_capture_hook(
    base: str, key: str, url: str, scratch: Path, options: CaptureBenchOptions, log: Path
) -> list[dict[str, Any]]:
    """The capture hook (Stop event) on a fresh `exchanges`-turn delta, spawn to exit; spawn to every
    exchange stored (the detached worker's parsing and POSTs included); and spawn to every episode
    embedded (the durable embedding job). Each run starts with the server idle."""
    hook_ms: list[float] = []
    stored_ms: list[float] = []
    embedded_ms: list[float] = []
    conn = await asyncpg.connect(url)
    try:
        for i in range(options.warmup + options.runs):
            session = str(uuid.uuid4())
            run_dir = scratch / f"capture-{i}"
            project = run_dir / "project"
            project.mkdir(parents=True)
            transcript = run_dir / f"{session}.jsonl"
            transcript.write_text(
                synthetic_transcript(session, str(project), options.exchanges, options.seed + i)
            )
            event = {
                "session_id": session,
                "transcript_path": str(transcript),
                "cwd": str(project),
                "hook_event_name": "Stop",
                "stop_hook_active": False,
            }
            env = _hook_env(key, log, run_dir / "state")
            await wait_idle(url)
            began = time.perf_counter()
            elapsed, _ = await asyncio.to_thread(
                _spawn, _hook_argv("capture", base), event, env, str(project)
            )
            stored = await _wait_stored(conn, session, options.exchanges)
            until_stored = (time.perf_counter() - began) * 1000
            if stored < options.exchanges:
                raise RuntimeError(
                    f"capture run {i}: {stored} of {options.exchanges} exchanges stored after "
                    f"{STORED_WAIT_S:.0f} s; hook log:\n{_tail(log)}"
                )
            embedded = await _wait_embedded(conn, session)
            until_embedded = (time.perf_counter() - began) * 1000
            if i >= options.warmup:
                hook_ms.append(elapsed)
                stored_ms.append(until_stored)
                if embedded:
                    embedded_ms.append(until_embedded)
    finally:
        await conn.close()
    note = f"{options.exchanges}-exchange delta, detached worker"
    stored_note = f"{options.exchanges} episodes per run, read off the database"
    embedded_note = "durable embedding job" + (
        "" if len(embedded_ms) == len(hook_ms) else f"; {len(hook_ms) - len(embedded_ms)} runs timed out"
    )
    return [
        _row("capture hook process (Stop)", hook_ms, note),
        _row("capture: spawn until all stored", stored_ms, stored_note),
        _row("capture: spawn until all embedded", embedded_ms, embedded_note),
    ]


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-2000:] if log.is_file() else "(empty)"


def _targets(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_name = {row["measure"]: row for row in rows}
    wanted = [
        ("capture hook process (Stop)", TARGET_CAPTURE_P95_MS, "capture hook p95"),
        ("session-start hook process", TARGET_SESSION_START_P95_MS, "SessionStart end to end p95"),
        ("http endpoint", TARGET_ENDPOINT_P95_MS, "UserPromptSubmit endpoint p95"),
    ]
    targets = []
    for measure, limit, label in wanted:
        row = by_name.get(measure)
        if row is not None and row["runs"]:
            targets.append(
                {"target": f"{label} <= {limit:g} ms", "p95_ms": row["p95_ms"], "met": row["p95_ms"] <= limit}
            )
    return targets


async def bench_capture(
    url: str, options: CaptureBenchOptions, console: Console, endpoint_bench: EndpointBench
) -> dict[str, Any]:
    """The report: the three measures against a `memoria serve` on the migrated scratch database `url`."""
    key = await _bench_key(url)
    env = {"MEMORIA_DATABASE__URL": url}
    with tempfile.TemporaryDirectory(prefix="memoria-bench-capture-") as tmp:
        scratch = Path(tmp)
        log = scratch / "hook.log"
        cwd = scratch / "session"
        cwd.mkdir()
        async with served_api(env, "--no-migrate", unset=["MEMORIA_DATABASE__READ_URL"]) as api:
            console.print(f"storing {options.memories} memories ({options.pinned} pinned) through REST …")
            await _store(api.base, key, options)
            pending = {"user-prompt-submit": await wait_idle(url)}
            console.print(f"UserPromptSubmit: {options.runs} runs (+{options.warmup} warm-up) …")
            rows = await asyncio.to_thread(
                endpoint_bench, api.base, key, str(cwd), NAMESPACE, options.runs, options.warmup
            )
            pending["session-start"] = await wait_idle(url)
            console.print("SessionStart …")
            rows += await bench_session_start(api.base, key, str(cwd), options, log)
            console.print(f"capture: {options.runs} runs of a {options.exchanges}-exchange delta …")
            rows += await bench_capture_hook(api.base, key, url, scratch, options, log)
    return {
        "memories": options.memories,
        "pinned": options.pinned,
        "runs": options.runs,
        "exchanges": options.exchanges,
        "rows": rows,
        "targets": _targets(rows),
        "jobs_pending_at_start": pending,
        "machine": {"cpus": os.cpu_count(), "loadavg_end": os.getloadavg()},
    }


def print_report(report: dict[str, Any], console: Console) -> None:
    table = Table(
        title=f"memoria bench capture: {report['memories']} memories, {report['runs']} runs, "
        f"{report['exchanges']}-exchange capture delta"
    )
    for column in COLUMNS:
        table.add_column(column, justify="left" if column in ("measure", "note") else "right")
    for row in report["rows"]:
        table.add_row(*(str(row[column]) for column in COLUMNS))
    console.print(table)
    for phase, count in report["jobs_pending_at_start"].items():
        if count:
            console.print(
                f"note: {phase} started with {count} background jobs still due (waited {IDLE_WAIT_S:.0f} s)"
            )
    for target in report["targets"]:
        console.print(
            f"{'met' if target['met'] else 'MISSED'}: {target['target']} (p95 {target['p95_ms']} ms)"
        )
