"""The real Qwen Code (from npm) with the hooks `memoria hook install --agent qwen` writes, against a
real `memoria serve` (embedded PostgreSQL), its model played by the fake OpenAI Chat Completions
API on 127.0.0.1.

1. A pinned memory of the project's namespace reaches the first request the model gets (Memoria's
   SessionStart / UserPromptSubmit context), and the person's own settings stay as they were; the
   session's exchange is captured from Qwen Code's session file (Stop -> `/v1/capture/qwen`) as an
   episode without the injected context, and the next session's prompt recalls it.
2. Server stopped: `qwen -p` prints exactly what it prints with no hooks installed, the exchange
   waits in the spool, and once the server is back (same address) `memoria capture flush` stores
   it once.

The hooks are installed in user scope (`~/.qwen/settings.json` of the test's HOME, which already
holds the person's own settings); `MEMORIA_CLIENT__CAPTURE_FLUSH=inline` makes capture
deterministic. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from memoria_bench.clis.openai_chat_api import FakeOpenAIChat
from memoria_bench.clis.qwen import (
    QWEN_TIMEOUT_S,
    USER_SETTINGS,
    qwen_argv,
    qwen_binary,
    qwen_env,
    write_user_settings,
)
from memoria_bench.serve import served_api
from tests.test_claude_code_mcp import MEMORIA

pytestmark = pytest.mark.e2e

PINNED_FACT = "Pinned: the quokka-9 project ships every release from the release-train branch only."
PROMPT = "Which branch does quokka-9 ship its releases from?"
REPLY = "quokka-9 ships every release from the release-train branch."
NEXT_PROMPT = "Remind me: which port does the walrus gateway of quokka-9 listen on?"
WALRUS_PROMPT = "Which port does the walrus gateway of quokka-9 listen on?"
WALRUS_REPLY = "The walrus gateway of quokka-9 listens on port 7341."
HOOK_EVENTS = {"SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd"}
CAPTURE_WAIT_S = 30


def _reply(body: dict[str, Any]) -> str:
    return WALRUS_REPLY if WALRUS_PROMPT in json.dumps(body.get("messages", [])[-1:]) else REPLY


@pytest.fixture
def fake_model() -> Iterator[FakeOpenAIChat]:
    fake = FakeOpenAIChat(_reply).start()
    yield fake
    fake.stop()


@dataclass
class Project:
    """A git repository, a HOME (with the person's Qwen Code settings) and the server's data."""

    repo: Path
    home: Path
    hook_log: Path
    data_dir: Path

    @property
    def namespace(self) -> str:
        return f"repo:{self.repo.name}"

    @property
    def settings(self) -> Path:
        return self.home / ".qwen" / "settings.json"

    def spool_text(self) -> str:
        """The client's spool (`~/.local/state/memoria/spool.json` of the HOME), empty when absent."""
        spool = self.home / ".local" / "state" / "memoria" / "spool.json"
        return spool.read_text() if spool.is_file() else ""

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
def project(tmp_path: Path) -> Project:
    repo = tmp_path / "quokka-9"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    home = tmp_path / "home"
    write_user_settings(home)
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
        [MEMORIA, "keys", "create", "--user", "qwen", "--create-user"], project.repo, env, 120
    )
    assert created.returncode == 0, created.stderr
    return created.stdout.strip()


async def _install_hooks(project: Project, base: str, key: str) -> None:
    """`memoria hook install --agent qwen` into the person's own ~/.qwen/settings.json."""
    installed = await _run(
        [MEMORIA, "hook", "install", "--agent", "qwen", "--namespace", project.namespace],
        project.repo,
        project.client_env(base, key),
        120,
    )
    assert installed.returncode == 0, f"{installed.stdout}\n{installed.stderr}"
    settings: dict[str, Any] = json.loads(project.settings.read_text())
    assert set(settings.get("hooks", {})) == HOOK_EVENTS, json.dumps(settings, indent=1)
    assert {k: v for k, v in settings.items() if k != "hooks"} == USER_SETTINGS


async def _qwen(
    qwen: str, project: Project, base: str, key: str, fake: FakeOpenAIChat, prompt: str = PROMPT
) -> subprocess.CompletedProcess[str]:
    env = project.client_env(base, key) | {"MEMORIA_CLIENT__CAPTURE_FLUSH": "inline"}
    return await _run(
        qwen_argv(qwen, prompt), project.repo, qwen_env(env, project.home, fake.base_url), QWEN_TIMEOUT_S
    )


async def _episodes(base: str, key: str, namespace: str) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        page = await http.get(
            "/v1/memories",
            params={"namespace": namespace, "kind": "episode", "limit": 100},
            headers={"Authorization": f"Bearer {key}"},
        )
    assert page.status_code == 200, page.text
    items: list[dict[str, Any]] = page.json()["items"]
    return items


async def _wait_for_episode(base: str, key: str, project: Project, text: str) -> dict[str, Any]:
    """The episode holding `text`, waited for at most CAPTURE_WAIT_S."""
    deadline = time.monotonic() + CAPTURE_WAIT_S
    seen: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        seen = await _episodes(base, key, project.namespace)
        matching = [item for item in seen if text in item["content"]]
        if matching:
            return matching[0]
        await asyncio.sleep(0.5)
    raise AssertionError(
        f"no episode with {text!r} after {CAPTURE_WAIT_S} s; episodes: {[i['content'][:200] for i in seen]}"
        f"\nhook log:\n{project.log()}"
    )


async def test_a_pinned_memory_and_a_captured_exchange_reach_the_requests_qwen_code_sends_the_model(
    project: Project, fake_model: FakeOpenAIChat
) -> None:
    qwen = await asyncio.to_thread(qwen_binary)
    async with served_api({"MEMORIA_DATABASE__DATA_DIR": str(project.data_dir)}) as api:
        key = await _create_key(project)
        async with httpx.AsyncClient(base_url=api.base, timeout=60) as http:
            stored = await http.post(
                "/v1/memories",
                json={"content": PINNED_FACT, "namespace": project.namespace, "pinned": True},
                headers={"Authorization": f"Bearer {key}"},
            )
        assert stored.status_code == 201, stored.text
        await _install_hooks(project, api.base, key)
        first = await _qwen(qwen, project, api.base, key, fake_model, WALRUS_PROMPT)
        turns = fake_model.completions()
        assert turns, f"Qwen Code never asked the model\n{_shown(first, project)}"
        assert PINNED_FACT in json.dumps(turns[0]["messages"]), (
            f"Memoria's context did not reach the model's first request\n{_shown(first, project)}"
        )
        assert (first.returncode, first.stdout.strip()) == (0, WALRUS_REPLY), _shown(first, project)

        episode = await _wait_for_episode(api.base, key, project, WALRUS_REPLY)
        assert WALRUS_PROMPT in episode["content"]
        assert PINNED_FACT not in episode["content"], "the injected context was captured as the prompt"
        assert episode["source"] == "qwen"

        before = len(fake_model.completions())
        following = await _qwen(qwen, project, api.base, key, fake_model, NEXT_PROMPT)
        asked = [t for t in fake_model.completions()[before:] if NEXT_PROMPT in json.dumps(t["messages"])]
        assert asked, f"the next session never asked the model\n{_shown(following, project)}"
        assert "7341" in json.dumps(asked[0]["messages"]), (
            f"the captured exchange was not recalled in the next session\n{_shown(following, project)}"
        )


async def test_with_the_server_stopped_qwen_code_prints_nothing_extra_and_the_spool_is_stored_once_later(
    project: Project, fake_model: FakeOpenAIChat
) -> None:
    qwen = await asyncio.to_thread(qwen_binary)
    server_env = {"MEMORIA_DATABASE__DATA_DIR": str(project.data_dir)}
    async with served_api(server_env) as api:
        base = api.base
        key = await _create_key(project)
        baseline = await _qwen(qwen, project, base, key, fake_model)
        assert baseline.returncode == 0, _shown(baseline, project)
        await _install_hooks(project, base, key)

    # the server is stopped: the hooks find nothing at `base`
    offline = await _qwen(qwen, project, base, key, fake_model)
    assert (offline.returncode, offline.stdout, offline.stderr) == (
        baseline.returncode,
        baseline.stdout,
        baseline.stderr,
    ), "with hooks and the server stopped, the output differs from no hooks at all\n" + _shown(
        offline, project
    )
    # inline capture found no server: the exchange waits in the spool
    assert REPLY in project.spool_text(), f"the exchange is not in the spool\nhook log:\n{project.log()}"

    # back on the same address, so the installed hooks (and the spooled batch) find it
    async with served_api(server_env, port=int(base.rsplit(":", 1)[1])) as api:
        assert api.base == base
        for _ in range(2):
            flushed = await _run(
                [MEMORIA, "capture", "flush"], project.repo, project.client_env(base, key), 120
            )
            assert flushed.returncode == 0, _shown(flushed, project)
        episodes = [
            item for item in await _episodes(base, key, project.namespace) if REPLY in item["content"]
        ]
        assert len(episodes) == 1, f"{episodes}\nhook log:\n{project.log()}"
        assert PROMPT in episodes[0]["content"]
        assert episodes[0]["source"] == "qwen"
        assert REPLY not in project.spool_text(), "the flushed exchange is still in the spool"
