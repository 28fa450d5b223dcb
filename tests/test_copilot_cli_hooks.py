"""The real GitHub Copilot CLI (from npm) with the hooks `memoria hook install --agent copilot` writes,
against a real `memoria serve` (embedded PostgreSQL), its model played by the fake OpenAI Chat
Completions API on 127.0.0.1 (Copilot CLI's BYOK provider variables).

1. A pinned memory of the project's namespace reaches the first request the model gets (Memoria's
   sessionStart / userPromptSubmitted context), and the person's own hook file stays as it was.
2. Server stopped (nothing listening at the hooks' URL): `copilot -p` prints exactly what it prints
   with no hooks installed, the hooks' log says they ran, the exchange waits in the client's spool,
   and once the server is back (same address) `memoria capture flush` stores it once.
3. An exchange of one `copilot -p` session, captured at agentStop from Copilot's session file, is an
   episode of source `copilot` and reaches the model's request in the next session.

The hooks are installed in user scope (`~/.copilot/hooks/memoria.json` of the test's HOME, beside a
hook file of the person's own). Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from memoria_bench.clis.copilot import COPILOT_TIMEOUT_S, copilot_argv, copilot_binary, copilot_env
from memoria_bench.clis.openai_chat_api import FakeOpenAIChat
from memoria_bench.serve import served_api
from tests.test_claude_code_mcp import MEMORIA

pytestmark = pytest.mark.e2e

PINNED_FACT = "Pinned: the wombat-4 project ships every release from the release-train branch only."
PROMPT = "Which branch does wombat-4 ship its releases from?"
REPLY = "wombat-4 ships every release from the release-train branch."
HOOK_EVENTS = {"sessionStart", "userPromptSubmitted", "agentStop"}
SPOOL_WAIT_S = 30
#: A hook file of the person's own, beside Memoria's (an install must leave it as it is).
THEIR_HOOKS = '{\n  "version": 1,\n  "hooks": {"sessionEnd": [{"type": "command", "bash": "true"}]}\n}\n'


@pytest.fixture
def fake_model() -> Iterator[FakeOpenAIChat]:
    fake = FakeOpenAIChat(lambda body: REPLY).start()
    yield fake
    fake.stop()


@dataclass
class Project:
    """A git repository, a HOME (with a hook file of the person's own) and the server's data."""

    repo: Path
    home: Path
    hook_log: Path
    data_dir: Path

    @property
    def namespace(self) -> str:
        return f"repo:{self.repo.name}"

    @property
    def hooks(self) -> Path:
        return self.home / ".copilot" / "hooks"

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
    repo = tmp_path / "wombat-4"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    home = tmp_path / "home"
    (home / ".copilot" / "hooks").mkdir(parents=True)
    (home / ".copilot" / "hooks" / "theirs.json").write_text(THEIR_HOOKS)
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
        [MEMORIA, "keys", "create", "--user", "copilot", "--create-user"], project.repo, env, 120
    )
    assert created.returncode == 0, created.stderr
    return created.stdout.strip()


async def _install_hooks(project: Project, base: str, key: str) -> None:
    """`memoria hook install --agent copilot` into ~/.copilot/hooks/memoria.json."""
    installed = await _run(
        [MEMORIA, "hook", "install", "--agent", "copilot", "--namespace", project.namespace],
        project.repo,
        project.client_env(base, key),
        120,
    )
    assert installed.returncode == 0, f"{installed.stdout}\n{installed.stderr}"
    ours: dict[str, Any] = json.loads((project.hooks / "memoria.json").read_text())
    assert set(ours.get("hooks", {})) == HOOK_EVENTS, json.dumps(ours, indent=1)
    assert (project.hooks / "theirs.json").read_text() == THEIR_HOOKS


async def _copilot(
    copilot: str, project: Project, base: str, key: str, fake: FakeOpenAIChat
) -> subprocess.CompletedProcess[str]:
    env = copilot_env(project.client_env(base, key), project.home, copilot, fake.base_url)
    return await _run(copilot_argv(copilot, PROMPT), project.repo, env, COPILOT_TIMEOUT_S)


async def test_a_pinned_memory_reaches_the_first_request_copilot_cli_sends_the_model(
    project: Project, fake_model: FakeOpenAIChat
) -> None:
    copilot = await asyncio.to_thread(copilot_binary)
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
        run = await _copilot(copilot, project, api.base, key, fake_model)
    turns = fake_model.completions()
    assert turns, f"Copilot CLI never asked the model\n{_shown(run, project)}"
    assert PINNED_FACT in json.dumps(turns[0]["messages"]), (
        f"Memoria's context did not reach the model's first request\n{_shown(run, project)}"
    )
    assert (run.returncode, run.stdout.strip()) == (0, REPLY), _shown(run, project)


def _spool_text(project: Project) -> str:
    """The client's spool (`~/.local/state/memoria/spool.json` of the HOME), empty when absent."""
    spool = project.home / ".local" / "state" / "memoria" / "spool.json"
    return spool.read_text() if spool.is_file() else ""


async def _wait_for_spool(project: Project, text: str) -> None:
    """Waited for at most SPOOL_WAIT_S: the capture hook hands the event to a detached worker, which
    may spool it after `copilot -p` has exited."""
    deadline = asyncio.get_running_loop().time() + SPOOL_WAIT_S
    while asyncio.get_running_loop().time() < deadline:
        if text in _spool_text(project):
            return
        await asyncio.sleep(0.5)
    raise AssertionError(
        f"the exchange is not in the spool after {SPOOL_WAIT_S} s\nhook log:\n{project.log()}"
    )


async def _copilot_episodes(base: str, key: str, project: Project) -> list[dict[str, Any]]:
    """The project's episodes of source `copilot`."""
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        page = await http.get(
            "/v1/memories",
            params={"namespace": project.namespace, "source": "copilot", "kind": "episode", "limit": 100},
            headers={"Authorization": f"Bearer {key}"},
        )
    assert page.status_code == 200, page.text
    return [dict(item) for item in page.json()["items"]]


async def test_with_the_server_stopped_copilot_cli_prints_nothing_extra_and_the_spool_is_stored_once_later(
    project: Project, fake_model: FakeOpenAIChat
) -> None:
    copilot = await asyncio.to_thread(copilot_binary)
    server_env = {"MEMORIA_DATABASE__DATA_DIR": str(project.data_dir)}
    async with served_api(server_env) as api:
        base = api.base
        key = await _create_key(project)
        baseline = await _copilot(copilot, project, base, key, fake_model)
        assert baseline.returncode == 0, _shown(baseline, project)
        await _install_hooks(project, base, key)

    # the server is stopped: the hooks meet a refused connection at `base`
    offline = await _copilot(copilot, project, base, key, fake_model)
    assert (offline.returncode, offline.stdout, offline.stderr) == (
        baseline.returncode,
        baseline.stdout,
        baseline.stderr,
    ), "with hooks and the server stopped, the output differs from no hooks at all\n" + _shown(
        offline, project
    )
    # the hooks did run, and said why they stayed silent where the person can look
    assert project.hook_log.is_file() and project.hook_log.read_text().strip(), _shown(offline, project)
    # capture found no server: the exchange waits in the spool
    await _wait_for_spool(project, REPLY)

    # back on the same address, so the installed hooks (and the spooled batch) find it
    async with served_api(server_env, port=int(base.rsplit(":", 1)[1])) as api:
        assert api.base == base
        for _ in range(2):
            flushed = await _run(
                [MEMORIA, "capture", "flush"], project.repo, project.client_env(base, key), 120
            )
            assert flushed.returncode == 0, _shown(flushed, project)
        episodes = await _copilot_episodes(base, key, project)
        assert len(episodes) == 1, f"{episodes}\nhook log:\n{project.log()}"
        assert PROMPT in episodes[0]["content"] and REPLY in episodes[0]["content"], episodes[0]["content"]
        assert REPLY not in _spool_text(project), "the flushed exchange is still in the spool"


FIRST_PROMPT = "Which port does the walrus gateway of wombat-4 listen on? It is in gateway.toml."
FIRST_REPLY = "The walrus gateway listens on port 7341 behind the amber proxy, as gateway.toml says."
SECOND_PROMPT = "Remind me which port the walrus gateway listens on."
CAPTURE_WAIT_S = 45


def _answers(body: dict[str, Any]) -> str:
    """The first session's prompt gets the gateway answer; anything else a short text."""
    return FIRST_REPLY if FIRST_PROMPT in json.dumps(body.get("messages", [])) else "Port 7341."


async def _wait_for_episode(base: str, key: str, project: Project, text: str) -> dict[str, Any]:
    """The episode holding `text`, waited for at most CAPTURE_WAIT_S (capture runs detached, after
    `copilot -p` may have exited)."""
    deadline = asyncio.get_running_loop().time() + CAPTURE_WAIT_S
    seen: list[dict[str, Any]] = []
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        while asyncio.get_running_loop().time() < deadline:
            page = await http.get(
                "/v1/memories",
                params={"namespace": project.namespace, "source": "copilot"},
                headers={"Authorization": f"Bearer {key}"},
            )
            assert page.status_code in (200, 404), page.text  # 404: no namespace before the first capture
            seen = page.json()["items"] if page.status_code == 200 else []
            matching = [item for item in seen if text in item["content"]]
            if matching:
                return dict(matching[0])
            await asyncio.sleep(0.5)
    raise AssertionError(
        f"no episode with {text!r} after {CAPTURE_WAIT_S} s; episodes: {[i['content'][:200] for i in seen]}"
        f"\nhook log:\n{project.log()}"
    )


async def test_an_exchange_captured_at_agent_stop_reaches_the_next_copilot_session(project: Project) -> None:
    copilot = await asyncio.to_thread(copilot_binary)
    fake = FakeOpenAIChat(_answers).start()
    try:
        async with served_api({"MEMORIA_DATABASE__DATA_DIR": str(project.data_dir)}) as api:
            key = await _create_key(project)
            await _install_hooks(project, api.base, key)
            env = copilot_env(project.client_env(api.base, key), project.home, copilot, fake.base_url)

            first = await _run(copilot_argv(copilot, FIRST_PROMPT), project.repo, env, COPILOT_TIMEOUT_S)
            assert (first.returncode, first.stdout.strip()) == (0, FIRST_REPLY), _shown(first, project)
            episode = await _wait_for_episode(api.base, key, project, "7341")
            assert FIRST_PROMPT in episode["content"], episode["content"]
            assert (episode["kind"], episode["source"]) == ("episode", "copilot")

            before = len(fake.completions())
            second = await _run(copilot_argv(copilot, SECOND_PROMPT), project.repo, env, COPILOT_TIMEOUT_S)
            asked = [turn for turn in fake.completions()[before:] if SECOND_PROMPT in json.dumps(turn)]
            assert asked, f"the second session never asked the model\n{_shown(second, project)}"
            assert "7341" in json.dumps(asked[0]["messages"]), (
                f"the captured exchange did not reach the next session\n{_shown(second, project)}"
            )
            assert second.returncode == 0, _shown(second, project)
    finally:
        fake.stop()
