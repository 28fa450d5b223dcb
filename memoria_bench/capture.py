"""`memoria bench capture`: what the capture and SessionStart hooks cost a Claude Code session.

One `memoria serve` on a scratch database, one user, one namespace holding a corpus (a few pinned).
Three questions, each measured from the outside, as Claude Code sees it:

- **capture hook**: the `scripts/memoria-hook capture` process (what Stop / PreCompact / SessionEnd
  run) on a 200-exchange transcript delta, in its default mode (check the event, hand it to a
  detached worker that spools, advances the cursor and sends, exit): spawn to exit is what Claude
  Code waits for. Each run gets a fresh client state folder (so a fresh cursor and spool) and a
  transcript of its own session, so every run sends all its exchanges. Also timed: from the spawn
  until every exchange of the run is stored as an episode on the server (the detached worker's
  work), and until every episode has its embedding (the durable embedding job), both read off the
  database;
- **SessionStart**: the `scripts/memoria-hook session-start` process end to end, spawn to exit,
  with its answer (the namespace's pinned and important memories); and the route alone;
- **UserPromptSubmit**: the hook endpoint (and the command hook process), by the function behind
  `memoria bench hook`, handed in by the command because `app.hooks` is a sibling layer.

Transcripts are synthesised in Claude Code's JSONL shape (read off a real `claude -p` run, see
tests/fixtures/transcripts/real-claude-p.jsonl): a prompt, a tool call and its result (every tenth
a failing command), and the final text reply, with the entries between a tool call and the reply
that the capture hook has to walk over.

Each measure starts with the server idle (no embedding or graph job due), so none pays for the
previous one's background work; the hooks run with bytecode caching on, as on a user's machine.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from rich.console import Console
from rich.table import Table

from app.auth.service import create_key, get_or_create_user
from app.client.environment import ENV_API_KEY, ENV_HOOK_BUDGET, ENV_HOOK_LOG
from app.core.stats import latency_summary
from memoria_bench.corpus import generate_memories, load_pool
from memoria_bench.serve import REPO_ROOT, served_api

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


def _stamp(start: datetime, seconds: float) -> str:
    return (start + timedelta(seconds=seconds)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _assistant(
    message_id: str, content: list[dict[str, Any]], stop_reason: str = "tool_use"
) -> dict[str, Any]:
    """An assistant entry of a Claude Code 2.1 transcript."""
    message = {"id": message_id, "type": "message", "role": "assistant", "model": "claude-opus-4-8"}
    return {"type": "assistant", "message": {**message, "content": content, "stop_reason": stop_reason}}


def _tool_result(tool_id: str, content: str, is_error: bool | None = None) -> dict[str, Any]:
    """The user entry carrying a tool's result (`is_error` only where Claude Code writes one)."""
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
    if is_error is not None:
        result["is_error"] = is_error
    return {"type": "user", "message": {"role": "user", "content": [result]}}


def synthetic_transcript(session_id: str, cwd: str, exchanges: int, seed: int) -> str:
    """`exchanges` prompt → tool call → tool result → reply turns as Claude Code 2.1 writes them."""
    rng = random.Random(seed)
    start = datetime(2026, 11, 24, 9, 0, tzinfo=UTC)
    common = {
        "isSidechain": False,
        "userType": "external",
        "entrypoint": "cli",
        "cwd": cwd,
        "sessionId": session_id,
        "version": "2.1.197",
        "gitBranch": "main",
    }
    lines: list[dict[str, Any]] = []
    parent: str | None = None
    clock = 0.0

    def add(entry: dict[str, Any]) -> None:
        nonlocal parent, clock
        clock += rng.uniform(0.05, 3.0)
        uid = str(uuid.UUID(int=rng.getrandbits(128)))
        lines.append(
            {"parentUuid": parent, **entry, "uuid": uid, "timestamp": _stamp(start, clock), **common}
        )
        parent = uid

    for turn in range(exchanges):
        topic = rng.choice(TOPICS)
        prompt = f"{topic} (step {turn}): {rng.choice(DETAILS)} Keep the change small and explain it."
        tool_id = f"toolu_bench_{turn:04d}"
        failing = turn % 10 == 9
        command = f"pytest -q tests/test_{topic.split()[0].lower()}_{turn}.py"
        lines.append({"type": "queue-operation", "operation": "enqueue", "sessionId": session_id})
        add({"type": "user", "message": {"role": "user", "content": prompt}, "promptId": str(uuid.uuid4())})
        add(
            _assistant(
                f"msg_bench_{turn}a",
                [
                    {"type": "text", "text": "Let me run the tests first."},
                    {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": command}},
                ],
            )
        )
        output = "Exit code 1\nFAILED: assertion error in test_case" if failing else "12 passed in 0.41s"
        add(
            {
                **_tool_result(tool_id, output, is_error=failing),
                "toolUseResult": {"stdout": output, "stderr": "", "interrupted": False},
            }
        )
        edit_id = f"toolu_bench_{turn:04d}e"
        path = f"{cwd}/src/{topic.split()[0].lower()}_{turn % 17}.py"
        edit = {"file_path": path, "old_string": "x = 1", "new_string": "x = 2"}
        add(
            _assistant(
                f"msg_bench_{turn}b", [{"type": "tool_use", "id": edit_id, "name": "Edit", "input": edit}]
            )
        )
        add(_tool_result(edit_id, f"The file {path} was updated."))
        reply = " ".join(rng.choice(REPLY_SENTENCES) for _ in range(rng.randint(3, 7)))
        text = {"type": "text", "text": f"Done with step {turn}. {reply}"}
        add(_assistant(f"msg_bench_{turn}c", [text], stop_reason="end_turn"))
        lines.append({"type": "last-prompt", "lastPrompt": prompt, "sessionId": session_id})
    return "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)


TOPICS = [
    "Billing retries after a declined card",
    "Migration of the orders table to bigint ids",
    "Flaky integration test for the search indexer",
    "Rate limiting of the public API",
    "Frontend build moving from webpack to vite",
    "Release checklist for the mobile app",
    "Caching of the pricing service responses",
    "Logging format for the worker processes",
]
DETAILS = [
    "The staging deploy broke after yesterday's merge.",
    "We agreed to keep backwards compatibility for one release.",
    "The on-call engineer saw timeouts around midnight.",
    "Product wants this behind a feature flag first.",
    "The database team asked us to avoid long transactions.",
]
REPLY_SENTENCES = [
    "I changed the retry loop to back off exponentially with jitter.",
    "The failing test depended on the wall clock; it now uses a fixed time.",
    "I added an index on the foreign key, which removes the sequential scan.",
    "The configuration default moved to the settings module so both services read it.",
    "I left the old code path behind the flag so we can roll back quickly.",
    "The error came from a missing await in the worker's shutdown handler.",
    "I documented the decision in the architecture notes of the repository.",
    "The benchmark shows the p95 dropped from 180 ms to 40 ms after the change.",
]


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
    run compile the hook's modules again, ~30 ms that no user pays)."""
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
