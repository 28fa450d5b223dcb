"""The real OpenCode (from npm) with the plugin `memoria hook install --agent opencode` writes, against
a real `memoria serve` (embedded PostgreSQL), its model played by the fake OpenAI Chat Completions
API on 127.0.0.1 (a custom provider of the person's `opencode.json`).

1. A pinned memory of the project's namespace reaches the first request the model gets (the
   plugin's session-start and recall context, added to the prompt's message), is not printed, and
   the person's `opencode.json` stays as it was.
2. Server stopped: `opencode run` prints exactly what it prints with no plugin installed.

The plugin is installed in user scope (`~/.config/opencode/plugins/memoria.js` of the test's HOME).
Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from memoria_bench.serve import served_api
from tests.fakes.openai_chat_api import FakeOpenAIChat
from tests.opencode import (
    OPENCODE_TIMEOUT_S,
    config_file,
    opencode_argv,
    opencode_binary,
    opencode_env,
    write_user_config,
)
from tests.test_claude_code_mcp import MEMORIA

pytestmark = pytest.mark.e2e

PINNED_FACT = "Pinned: the wombat-4 project ships every release from the release-train branch only."
PROMPT = "Which branch does wombat-4 ship its releases from?"
REPLY = "wombat-4 ships every release from the release-train branch."


@pytest.fixture
def fake_model() -> Iterator[FakeOpenAIChat]:
    fake = FakeOpenAIChat(lambda body: REPLY).start()
    yield fake
    fake.stop()


@dataclass
class Project:
    """A git repository, a HOME (with the person's opencode.json) and the server's data."""

    repo: Path
    home: Path
    hook_log: Path
    data_dir: Path

    @property
    def namespace(self) -> str:
        return f"repo:{self.repo.name}"

    @property
    def plugin(self) -> Path:
        return self.home / ".config" / "opencode" / "plugins" / "memoria.js"

    def client_env(self, base: str, key: str) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORIA_", "XDG_"))}
        return keep | {
            "HOME": str(self.home),
            "MEMORIA_CLIENT__URL": base,
            "MEMORIA_CLIENT__API_KEY": key,
            "MEMORIA_CLIENT__HOOK_LOG": str(self.hook_log),
        }

    def log(self) -> str:
        return self.hook_log.read_text()[-4000:] if self.hook_log.is_file() else "(no hook log)"


@pytest.fixture
def project(tmp_path: Path, fake_model: FakeOpenAIChat) -> Project:
    repo = tmp_path / "wombat-4"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    home = tmp_path / "home"
    write_user_config(home, fake_model.base_url)
    return Project(repo, home, tmp_path / "hook.log", tmp_path / "pgdata")


async def _run(
    argv: list[str], cwd: Path, env: dict[str, str], limit_s: float
) -> subprocess.CompletedProcess[str]:
    """Run a command in a worker thread, so the server's output keeps being read meanwhile."""
    return await asyncio.to_thread(
        subprocess.run, argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=limit_s, check=False
    )


def _shown(run: subprocess.CompletedProcess[str], project: Project) -> str:
    return (
        f"exit {run.returncode}\nstdout:\n{run.stdout[-3000:]}\nstderr:\n{run.stderr[-3000:]}\n"
        f"hook log:\n{project.log()}"
    )


async def _create_key(project: Project) -> str:
    env = {**os.environ, "MEMORIA_DATABASE__DATA_DIR": str(project.data_dir), "HF_HUB_OFFLINE": "1"}
    created = await _run(
        [MEMORIA, "keys", "create", "--user", "opencode", "--create-user"], project.repo, env, 120
    )
    assert created.returncode == 0, created.stderr
    return created.stdout.strip()


async def _install_plugin(project: Project, base: str, key: str) -> None:
    """`memoria hook install --agent opencode` into the person's own OpenCode config folder."""
    config = config_file(project.home).read_bytes()
    installed = await _run(
        [MEMORIA, "hook", "install", "--agent", "opencode", "--namespace", project.namespace],
        project.repo,
        project.client_env(base, key),
        120,
    )
    assert installed.returncode == 0, f"{installed.stdout}\n{installed.stderr}"
    assert project.plugin.is_file(), installed.stderr
    assert config_file(project.home).read_bytes() == config


async def _opencode(opencode: str, project: Project, base: str, key: str) -> subprocess.CompletedProcess[str]:
    env = opencode_env(project.client_env(base, key), project.home)
    return await _run(opencode_argv(opencode, PROMPT), project.repo, env, OPENCODE_TIMEOUT_S)


async def test_a_pinned_memory_reaches_the_first_request_opencode_sends_the_model(
    project: Project, fake_model: FakeOpenAIChat
) -> None:
    opencode = await asyncio.to_thread(opencode_binary)
    async with served_api({"MEMORIA_DATABASE__DATA_DIR": str(project.data_dir)}) as api:
        key = await _create_key(project)
        async with httpx.AsyncClient(base_url=api.base, timeout=60) as http:
            stored = await http.post(
                "/v1/memories",
                json={"content": PINNED_FACT, "namespace": project.namespace, "pinned": True},
                headers={"Authorization": f"Bearer {key}"},
            )
        assert stored.status_code == 201, stored.text
        await _install_plugin(project, api.base, key)
        run = await _opencode(opencode, project, api.base, key)
    turns = [body for body in fake_model.completions() if body.get("tools")]
    assert turns, f"OpenCode never asked the model with its tools\n{_shown(run, project)}"
    assert PINNED_FACT in json.dumps(turns[0]["messages"]), (
        f"Memoria's context did not reach the model's first request\n{_shown(run, project)}"
    )
    assert (run.returncode, run.stdout.strip()) == (0, REPLY), _shown(run, project)
    assert PINNED_FACT not in run.stdout + run.stderr, _shown(run, project)


async def test_with_the_server_stopped_opencode_prints_what_it_prints_without_the_plugin(
    project: Project, fake_model: FakeOpenAIChat
) -> None:
    opencode = await asyncio.to_thread(opencode_binary)
    async with served_api({"MEMORIA_DATABASE__DATA_DIR": str(project.data_dir)}) as api:
        base = api.base
        key = await _create_key(project)
        baseline = await _opencode(opencode, project, base, key)
        assert baseline.returncode == 0, _shown(baseline, project)
        await _install_plugin(project, base, key)

    # the server is stopped: the plugin's hook client finds nothing at `base`
    offline = await _opencode(opencode, project, base, key)
    assert (offline.returncode, offline.stdout, offline.stderr) == (
        baseline.returncode,
        baseline.stdout,
        baseline.stderr,
    ), "with the plugin and the server stopped, the output differs from no plugin at all\n" + _shown(
        offline, project
    )
