"""`memoria bench session`'s run: a real `memoria serve`, two HOMEs (one with Memoria's hooks
installed, one without), and the agent's real CLI timed in both, interleaved (the package docstring
says what and why)."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

from memoria_bench.clis.model_api import RecordingApi
from memoria_bench.hook_latency import PYTHON_DEV_VARIABLES, TOPICS
from memoria_bench.serve import REPO_ROOT, memoria_command, served_api
from memoria_bench.session.agents import REPLY, SESSION_CLIS, SessionCli
from memoria_bench.session.stats import session_summary
from memoria_hook_client.namespace import namespace_for_cwd

HOOKS, BARE = "hooks", "no hooks"
COMMAND_TIMEOUT_S = 120
#: A word only Memoria's contexts carry ("Memoria: memories of namespace …", "Memories recalled by
#: Memoria …"): a request holding it was given a hook's context.
CONTEXT_MARK = "Memoria"


class SessionFailed(RuntimeError):
    """A CLI session or a Memoria command failed; the message holds what it printed."""


@dataclass(frozen=True, slots=True)
class SessionOptions:
    agent: str
    runs: int = 20
    warmup: int = 1
    port: int | None = None
    """The server's port (default: a free one)."""


TimeArm = Callable[[str, str], Awaitable[float]]
"""(arm, prompt) -> the session's wall time in ms."""


async def interleaved(runs: int, warmup: int, time_arm: TimeArm) -> dict[str, list[float]]:
    """Each round times both arms on the same prompt, the order alternating round by round (so a
    drift of the machine's load, or the after-effects of one arm's background work, fall on both
    alike); the first `warmup` rounds are left out. Every round's prompt is new: the server caches
    query vectors, and a repeated prompt would time its cache."""
    salt = secrets.token_hex(3)
    samples: dict[str, list[float]] = {HOOKS: [], BARE: []}
    for round_number in range(warmup + runs):
        prompt = f"{TOPICS[round_number % len(TOPICS)]} (round {round_number} of {salt})?"
        order = (HOOKS, BARE) if round_number % 2 == 0 else (BARE, HOOKS)
        for arm in order:
            elapsed = await time_arm(arm, prompt)
            if round_number >= warmup:
                samples[arm].append(elapsed)
    return samples


def session_report(
    options: SessionOptions, binary: str, samples: Mapping[str, list[float]], given_context: Mapping[str, int]
) -> dict[str, Any]:
    """The JSON report: the agent, its CLI, the summary (targets, added time, both arms), how many
    sessions of each arm (warm-up included) the model was given Memoria's context in, and every
    timed sample."""
    return {
        "agent": options.agent,
        "cli": binary,
        "runs": options.runs,
        "warmup": options.warmup,
        **session_summary(samples[HOOKS], samples[BARE]),
        "sessions_per_arm": options.warmup + options.runs,
        "sessions_given_context": dict(given_context),
        "samples_ms": {arm: [round(value, 1) for value in values] for arm, values in samples.items()},
    }


async def _command(argv: list[str], cwd: Path, env: Mapping[str, str], limit_s: float) -> tuple[float, str]:
    """Run `argv` to its end in a worker thread (the server's output keeps being read meanwhile):
    its wall time in ms and its stdout; a failure raises SessionFailed with what it printed. `PWD`
    is `cwd`, as a shell that ran it there would set it: OpenCode takes its project folder (the one
    its plugin, and so the hooks' namespace, sees) from `PWD`, not from the process's directory."""
    began = time.perf_counter()
    done = await asyncio.to_thread(
        subprocess.run,
        argv,
        cwd=cwd,
        env={**env, "PWD": str(cwd)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=limit_s,
        check=False,
    )
    elapsed = (time.perf_counter() - began) * 1000
    if done.returncode != 0:
        raise SessionFailed(
            f"{argv[0]} … exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )
    return elapsed, done.stdout


def _client_env(base: str, key: str, log: Path) -> dict[str, str]:
    """A person's environment for both arms: Memoria's client pointed at the server, as a person's
    machine runs the hooks (`memoria_bench.hook_latency.hook_environment` says why)."""
    keep = {
        k: v for k, v in os.environ.items() if not k.startswith("MEMORIA_") and k not in PYTHON_DEV_VARIABLES
    }
    return keep | {
        "MEMORIA_CLIENT__URL": base,
        "MEMORIA_CLIENT__API_KEY": key,
        "MEMORIA_CLIENT__HOOK_LOG": str(log),
    }


async def _seed(base: str, key: str, namespace: str) -> None:
    """A pinned memory (SessionStart brings it) and one per prompt topic (the prompt hook recalls it),
    so the hooked sessions carry context as a person's would."""
    notes = [
        {"content": "Pinned: this project ships every release from the release-train branch.", "pinned": True}
    ]
    notes += [{"content": f"{topic}: see the runbook, section {i + 1}."} for i, topic in enumerate(TOPICS)]
    async with httpx.AsyncClient(base_url=base, timeout=120) as http:
        stored = await http.post(
            "/v1/memories",
            json=[{**note, "namespace": namespace} for note in notes],
            headers={"Authorization": f"Bearer {key}"},
        )
    if stored.status_code != 201:
        raise SessionFailed(f"storing the seed memories answered {stored.status_code}: {stored.text[:300]}")


def _given_context(fake: RecordingApi, since: int) -> bool:
    return any(CONTEXT_MARK in json.dumps(request.body) for request in fake.requests[since:])


async def bench_session(options: SessionOptions, console: Console) -> dict[str, Any]:
    """Time `options.agent`'s real CLI, a whole headless session per run, with Memoria's hooks
    installed and without, interleaved, against a real `memoria serve` (its own embedded PostgreSQL)."""
    cli = SESSION_CLIS[options.agent]
    binary = await asyncio.to_thread(cli.binary)
    with tempfile.TemporaryDirectory(prefix="memoria-bench-session-") as scratch:
        root = Path(scratch)
        repo = root / "project"
        repo.mkdir()
        await _command(["git", "init", "-q", str(repo)], root, os.environ, 30)
        (repo / "README.md").write_text("A project the session bench runs its agent in.\n")
        fake, model_url = cli.start_fake()
        try:
            server_env = {"MEMORIA_DATABASE__DATA_DIR": str(root / "pgdata")}
            async with served_api(server_env, port=options.port) as api:
                console.print(f"memoria serve at {api.base}; {cli.label} at {binary}")
                samples, given = await _measure(
                    options, cli, binary, api.base, root, repo, fake, model_url, console
                )
        finally:
            fake.stop()
    return session_report(options, binary, samples, given)


async def _measure(
    options: SessionOptions,
    cli: SessionCli,
    binary: str,
    base: str,
    root: Path,
    repo: Path,
    fake: RecordingApi,
    model_url: str,
    console: Console,
) -> tuple[dict[str, list[float]], dict[str, int]]:
    server_env = {**os.environ, "MEMORIA_DATABASE__DATA_DIR": str(root / "pgdata")}
    _, printed = await _command(
        list(memoria_command("keys", "create", "--user", "bench-session", "--create-user")),
        repo,
        server_env,
        120,
    )
    key = printed.strip()
    namespace = namespace_for_cwd(str(repo)) or "bench-session"
    await _seed(base, key, namespace)
    client = _client_env(base, key, root / "hook.log")
    homes = {arm: root / arm.replace(" ", "-") for arm in (HOOKS, BARE)}
    envs = {arm: cli.environment(client, home, binary, model_url) for arm, home in homes.items()}
    settled = True
    for home in homes.values():
        home.mkdir()
        cli.write_settings(home, model_url)
        settled = cli.settle_home(home, binary) and settled
    if not settled:
        console.print(
            f"note: {cli.label}'s first-start files are missing beside {binary}: both arms pay for them"
        )
    install = list(memoria_command("hook", "install", "--agent", options.agent))
    # from the checkout, so `memoria` (and the hook command it writes) is this checkout's
    await _command(install, REPO_ROOT, envs[HOOKS], COMMAND_TIMEOUT_S)
    given = {HOOKS: 0, BARE: 0}
    done = 0

    async def time_arm(arm: str, prompt: str) -> float:
        nonlocal done
        since = len(fake.requests)
        elapsed, stdout = await _command(cli.argv(binary, prompt), repo, envs[arm], cli.timeout_s)
        if REPLY not in stdout:
            raise SessionFailed(f"{cli.label} did not print the model's reply ({arm}):\n{stdout[-2000:]}")
        given[arm] += _given_context(fake, since)
        done += 1
        console.print(f"  {done}/{2 * (options.warmup + options.runs)} {arm}: {elapsed:.0f} ms")
        return elapsed

    samples = await interleaved(options.runs, options.warmup, time_arm)
    return samples, given


def print_report(report: Mapping[str, Any], console: Console) -> None:
    table = Table(title=f"memoria bench session --agent {report['agent']} ({report['runs']} runs per arm)")
    for column in ("arm", "runs", "median_ms", "p95_ms", "max_ms", "given context"):
        table.add_column(column, justify="left" if column == "arm" else "right")
    for arm, figures in report["arms"].items():
        cells = (figures["runs"], figures["median_ms"], figures["p95_ms"], figures["max_ms"])
        table.add_row(arm, *(str(cell) for cell in cells), str(report["sessions_given_context"][arm]))
    console.print(table)
    added = report["added"]
    console.print(
        f"added by the hooks: median {added['median_ms']} ms (95% CI {added['median_ci95_low_ms']} to "
        f"{added['median_ci95_high_ms']} ms), p95 {added['p95_ms']} ms"
    )
    for check in report["targets"]:
        console.print(
            f"{'met' if check['met'] else 'NOT met'}: {check['target']} (measured {check['value']})"
        )
