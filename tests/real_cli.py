"""What the real-CLI hook tests share (tests/test_claude_code_hooks.py, test_codex_cli.py,
test_gemini_cli_hooks.py, test_qwen_code_hooks.py, test_opencode_hooks.py, test_copilot_cli_hooks.py):
the project an agent runs in, a command run without stalling the served API, the key, the
server's episodes, bounded waits for what a capture hook sends or spools, and the two halves of
every "server stopped" test: the same session with no hooks and with the server down, then the
spooled exchange stored once when the server is back.

Each test module keeps what is its agent's own: the fake model and its script, where the agent keeps
its config, how it is started and how its requests carry Memoria's context. Every wait here ends at
a deadline the caller names and then fails with what the hooks logged.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import httpx

from memoria_bench.serve import served_api
from tests.test_claude_code_mcp import MEMORIA

#: The file the agents' scripted first sessions read (`ls` or `read`) before answering.
GATEWAY_TOML = "[walrus]\nport = 7341\n"
#: Seconds a `memoria` command of the test may take (a cold start on a busy machine).
MEMORIA_TIMEOUT_S = 120


@dataclass
class AgentProject:
    """A git repository, a HOME (the agent's config and the client's state folder), a hook log and
    the server's data folder, for one test; the environment the hook client runs in."""

    repo: Path
    home: Path
    hook_log: Path
    data_dir: Path

    #: Variables of the test's own environment left out of the client's: Memoria's (the test sets
    #: them), XDG folders (the state folder must be the one under this HOME) and the agent's own.
    DROPPED_ENV: ClassVar[tuple[str, ...]] = ("MEMORIA_", "XDG_")

    @property
    def namespace(self) -> str:
        return f"repo:{self.repo.name}"

    @property
    def server_env(self) -> dict[str, str]:
        """`memoria serve`'s environment: this test's data folder."""
        return {"MEMORIA_DATABASE__DATA_DIR": str(self.data_dir)}

    @property
    def state(self) -> Path:
        """The client's state folder: the default one under this HOME."""
        return self.home / ".local" / "state" / "memoria"

    def client_env(self, base: str, key: str) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items() if not k.startswith(self.DROPPED_ENV)}
        return keep | {
            "HOME": str(self.home),
            "MEMORIA_CLIENT__URL": base,
            "MEMORIA_CLIENT__API_KEY": key,
            "MEMORIA_CLIENT__HOOK_LOG": str(self.hook_log),
        }

    def log(self) -> str:
        return self.hook_log.read_text()[-4000:] if self.hook_log.is_file() else "(no hook log)"

    def spool_text(self) -> str:
        """The client's spool, empty when there is none."""
        spool = self.state / "spool.json"
        return spool.read_text() if spool.is_file() else ""


def git_repo(path: Path, *, gateway: bool = True) -> Path:
    """A fresh git repository at `path`, holding gateway.toml unless told not to."""
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True, timeout=30)
    if gateway:
        (path / "gateway.toml").write_text(GATEWAY_TOML)
    return path


async def run(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    limit_s: float,
    *,
    stdin: int | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a command in a worker thread, so the server's output keeps being read meanwhile; `stdin`
    as subprocess takes it (None: the test's own)."""
    return await asyncio.to_thread(
        subprocess.run,
        argv,
        cwd=cwd,
        env=env,
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=limit_s,
        check=False,
    )


def shown(run: subprocess.CompletedProcess[str], project: AgentProject) -> str:
    """A run's exit, the ends of its output and the hook log, for an assertion's message."""
    return (
        f"exit {run.returncode}\nstdout:\n{run.stdout[-3000:]}\nstderr:\n{run.stderr[-3000:]}\n"
        f"hook log:\n{project.log()}"
    )


async def create_key(project: AgentProject, user: str) -> str:
    """`memoria keys create` for a new `user` of the project's server data."""
    env = {**os.environ, **project.server_env, "HF_HUB_OFFLINE": "1"}
    created = await run(
        [MEMORIA, "keys", "create", "--user", user, "--create-user"], project.repo, env, MEMORIA_TIMEOUT_S
    )
    assert created.returncode == 0, created.stderr
    return created.stdout.strip()


async def memoria(project: AgentProject, base: str, key: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`memoria <args>` in the repository, as the person (the client's environment), asserted to succeed."""
    done = await run([MEMORIA, *args], project.repo, project.client_env(base, key), MEMORIA_TIMEOUT_S)
    assert done.returncode == 0, shown(done, project)
    return done


async def store_pinned(base: str, key: str, namespace: str, content: str) -> None:
    """A pinned memory in `namespace`, which every session start brings."""
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        stored = await http.post(
            "/v1/memories",
            json={"content": content, "namespace": namespace, "pinned": True},
            headers={"Authorization": f"Bearer {key}"},
        )
    assert stored.status_code == 201, stored.text


async def episodes(base: str, key: str, namespace: str, *, source: str | None = None) -> list[dict[str, Any]]:
    """The namespace's episodes (of `source` when given); none while the namespace does not exist
    yet (404: nothing was stored in it)."""
    params: dict[str, str | int] = {"namespace": namespace, "kind": "episode", "limit": 100}
    if source is not None:
        params["source"] = source
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        page = await http.get("/v1/memories", params=params, headers={"Authorization": f"Bearer {key}"})
    if page.status_code == 404:
        return []
    assert page.status_code == 200, page.text
    items: list[dict[str, Any]] = page.json()["items"]
    return items


async def wait_for_episode(
    base: str, key: str, project: AgentProject, text: str, limit_s: float, *, source: str | None = None
) -> dict[str, Any]:
    """The project's episode holding `text`, waited for at most `limit_s` (capture may be sent by a
    detached worker, after the agent has exited)."""
    deadline = time.monotonic() + limit_s
    seen: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        seen = await episodes(base, key, project.namespace, source=source)
        matching = [item for item in seen if text in item["content"]]
        if matching:
            return matching[0]
        await asyncio.sleep(0.5)
    raise AssertionError(
        f"no episode with {text!r} after {limit_s} s; episodes: {[i['content'][:200] for i in seen]}"
        f"\nspool: {project.spool_text()}\nhook log:\n{project.log()}"
    )


async def wait_for_spool(project: AgentProject, text: str, limit_s: float) -> None:
    """`text` in the client's spool, waited for at most `limit_s` (capture with the server down
    spools from a detached worker, which may finish after the agent has exited)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if text in project.spool_text():
            return
        await asyncio.sleep(0.5)
    raise AssertionError(f"the exchange is not in the spool after {limit_s} s\nhook log:\n{project.log()}")


Session = Callable[[str, str], Awaitable[subprocess.CompletedProcess[str]]]
"""One agent session against the server at (base URL, key)."""


def screen(run: subprocess.CompletedProcess[str]) -> tuple[int, str, str]:
    """What a person sees of a run."""
    return run.returncode, run.stdout, run.stderr


@dataclass(frozen=True)
class Stopped:
    """The server's address and key, and the session run with Memoria's hooks and the server stopped."""

    base: str
    key: str
    offline: subprocess.CompletedProcess[str]


async def run_with_the_server_stopped(
    project: AgentProject,
    user: str,
    session: Session,
    install: Callable[[str, str], Awaitable[object]],
    shows: Callable[[subprocess.CompletedProcess[str]], object] = screen,
) -> Stopped:
    """`session` with no hooks (the baseline, the server up), then `install` and, with the server
    stopped, `session` again: asserted to show the person what the baseline showed (`shows`: what of
    a run a person sees)."""
    async with served_api(project.server_env) as api:
        base = api.base
        key = await create_key(project, user)
        baseline = await session(base, key)
        assert baseline.returncode == 0, shown(baseline, project)
        await install(base, key)
    offline = await session(base, key)
    assert shows(offline) == shows(baseline), (
        "with Memoria's hooks and the server stopped, the output differs from none at all\n"
        + shown(offline, project)
    )
    return Stopped(base, key, offline)


async def stored_once_after_restart(
    project: AgentProject, stopped: Stopped, prompt: str, reply: str, source: str
) -> None:
    """With the server back on the address the installed hooks and the spooled batches name, two
    `memoria capture flush` store the exchange that waited in the spool as exactly one episode of
    `source`, and it leaves the spool."""
    base, key = stopped.base, stopped.key
    async with served_api(project.server_env, port=int(base.rsplit(":", 1)[1])) as api:
        assert api.base == base
        for _ in range(2):
            await memoria(project, base, key, "capture", "flush")
        stored = [item for item in await episodes(base, key, project.namespace) if reply in item["content"]]
        assert len(stored) == 1, f"{stored}\nhook log:\n{project.log()}"
        assert (prompt in stored[0]["content"], stored[0]["source"]) == (True, source), stored[0]
        assert reply not in project.spool_text(), "the flushed exchange is still in the spool"
