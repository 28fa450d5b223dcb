"""The real OpenCode (from npm) with the plugin `memoria hook install --agent opencode` writes, against
a real `memoria serve` (embedded PostgreSQL), its model played by the fake OpenAI Chat Completions
API on 127.0.0.1 (a custom provider of the person's `opencode.json`).

1. A pinned memory of the project's namespace reaches the first request the model gets (the
   plugin's session-start context, added to the prompt's message) and is not printed; the
   exchange (a `read` tool call, then the answer) is captured when the session goes idle, as an
   episode of source `opencode` without the injected context and with the project folder as its
   cwd (OpenCode is started with `PWD` naming it, as a shell there would), and the next session's
   prompt recalls it; the person's `opencode.json` stays as it was.
2. Server stopped: `opencode run` prints exactly what it prints with no plugin installed, the
   exchange waits in the spool, and once the server is back `memoria capture flush` stores it once.

The plugin is installed in user scope (`~/.config/opencode/plugins/memoria.js` of the test's HOME).
Every wait is bounded.
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

from memoria_bench.clis.opencode import (
    OPENCODE_TIMEOUT_S,
    config_file,
    opencode_argv,
    opencode_binary,
    opencode_env,
    write_user_config,
)
from memoria_bench.serve import served_api
from tests.fakes.openai_chat_tools import FakeOpenAIChatTools, ToolCall, offered_tools, tool_results
from tests.test_claude_code_mcp import MEMORIA

pytestmark = pytest.mark.e2e

PINNED_FACT = "Pinned: the wombat-4 project ships every release from the release-train branch only."
FIRST_PROMPT = "Which port does the walrus gateway of wombat-4 listen on? Check the repo first."
FIRST_REPLY = "The walrus gateway listens on port 7341 behind the amber proxy; see gateway.toml."
SECOND_PROMPT = "Remind me which port the walrus gateway listens on."
OFFLINE_PROMPT = "Note for later: the narwhal cache of wombat-4 is flushed every Tuesday at noon."
OFFLINE_REPLY = "Noted: the narwhal cache is flushed every Tuesday at noon."
CAPTURE_WAIT_S = 45


def script(body: dict[str, Any]) -> str | ToolCall:
    """For FIRST_PROMPT one `read` of gateway.toml, then FIRST_REPLY; text otherwise."""
    asked = json.dumps(body.get("messages", []))
    if not body.get("tools"):  # OpenCode's title request
        return "Walrus gateway"
    if FIRST_PROMPT in asked:
        if "read" in offered_tools(body) and not tool_results(body):
            return ToolCall("read", {"filePath": "gateway.toml"})
        return FIRST_REPLY
    if OFFLINE_PROMPT in asked:
        return OFFLINE_REPLY
    return "Done."


@pytest.fixture
def fake_model() -> Iterator[FakeOpenAIChatTools]:
    fake = FakeOpenAIChatTools(lambda body: "Done.", tool_script=script).start()
    yield fake
    fake.stop()


@dataclass
class Project:
    """A git repository, a HOME (with the person's opencode.json) and the server's data."""

    repo: Path
    home: Path
    state: Path
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
def project(tmp_path: Path, fake_model: FakeOpenAIChatTools) -> Project:
    repo = tmp_path / "wombat-4"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    (repo / "gateway.toml").write_text("[walrus]\nport = 7341\n")
    home = tmp_path / "home"
    write_user_config(home, fake_model.base_url)
    state = home / ".local" / "state" / "memoria"
    return Project(repo, home, state, tmp_path / "hook.log", tmp_path / "pgdata")


async def _run(
    argv: list[str], cwd: Path, env: dict[str, str], limit_s: float
) -> subprocess.CompletedProcess[str]:
    """Run a command in a worker thread, so the server's output keeps being read meanwhile. `PWD` is
    `cwd`, as a shell that ran it there would set it: OpenCode takes its project folder (the one its
    plugin reports as the session's cwd) from `PWD`, not from the process's directory."""
    return await asyncio.to_thread(
        subprocess.run,
        argv,
        cwd=cwd,
        env={**env, "PWD": str(cwd)},
        capture_output=True,
        text=True,
        timeout=limit_s,
        check=False,
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


async def _opencode(
    opencode: str, project: Project, base: str, key: str, prompt: str
) -> subprocess.CompletedProcess[str]:
    env = opencode_env(project.client_env(base, key), project.home)
    return await _run(opencode_argv(opencode, prompt), project.repo, env, OPENCODE_TIMEOUT_S)


def _asked(fake: FakeOpenAIChatTools, prompt: str, since: int = 0) -> list[dict[str, Any]]:
    """The model's turns (after the first `since`, title requests left out) that carry `prompt`."""
    return [
        body
        for body in fake.completions()[since:]
        if body.get("tools") and prompt in json.dumps(body.get("messages", []))
    ]


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
    """The episode holding `text`, waited for at most CAPTURE_WAIT_S (the plugin's capture runs
    detached, after `opencode run` may have exited)."""
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
        f"\nspool: {_spool_text(project)}\nhook log:\n{project.log()}"
    )


def _spool_text(project: Project) -> str:
    spool = project.state / "spool.json"
    return spool.read_text() if spool.is_file() else ""


async def _wait_for_spool(project: Project, text: str) -> None:
    """Waited for at most CAPTURE_WAIT_S: the plugin's capture runs detached."""
    deadline = time.monotonic() + CAPTURE_WAIT_S
    while time.monotonic() < deadline:
        if text in _spool_text(project):
            return
        await asyncio.sleep(0.5)
    raise AssertionError(f"the exchange is not in the spool\nhook log:\n{project.log()}")


async def test_a_pinned_memory_and_a_captured_exchange_reach_the_next_opencode_session(
    project: Project, fake_model: FakeOpenAIChatTools
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

        first = await _opencode(opencode, project, api.base, key, FIRST_PROMPT)
        asked = _asked(fake_model, FIRST_PROMPT)
        assert asked, f"OpenCode never asked the model\n{_shown(first, project)}"
        assert PINNED_FACT in json.dumps(asked[0]["messages"]), (
            f"Memoria's context did not reach the model's first request\n{_shown(first, project)}"
        )
        assert (first.returncode, first.stdout.strip()) == (0, FIRST_REPLY), _shown(first, project)
        assert PINNED_FACT not in first.stdout + first.stderr, _shown(first, project)

        episode = await _wait_for_episode(api.base, key, project, FIRST_REPLY)
        assert FIRST_PROMPT in episode["content"]
        assert PINNED_FACT not in episode["content"], "the injected context was captured as the prompt"
        assert (episode["kind"], episode["source"]) == ("episode", "opencode")
        assert episode["metadata"]["cwd"] == str(project.repo), "the plugin reported another project folder"

        before = len(fake_model.completions())
        second = await _opencode(opencode, project, api.base, key, SECOND_PROMPT)
        asked_then = _asked(fake_model, SECOND_PROMPT, before)
        assert asked_then, f"the second session never asked the model\n{_shown(second, project)}"
        assert "7341" in json.dumps(asked_then[0]["messages"]), (
            f"the captured exchange did not reach the next session\n{_shown(second, project)}"
        )
        assert second.returncode == 0, _shown(second, project)


async def test_with_the_server_stopped_opencode_prints_what_it_prints_without_the_plugin_and_loses_nothing(
    project: Project, fake_model: FakeOpenAIChatTools
) -> None:
    opencode = await asyncio.to_thread(opencode_binary)
    server_env = {"MEMORIA_DATABASE__DATA_DIR": str(project.data_dir)}
    async with served_api(server_env) as api:
        base = api.base
        key = await _create_key(project)
        baseline = await _opencode(opencode, project, base, key, OFFLINE_PROMPT)
        assert baseline.returncode == 0, _shown(baseline, project)
        await _install_plugin(project, base, key)

    # the server is stopped: the plugin's hook client finds nothing at `base`
    offline = await _opencode(opencode, project, base, key, OFFLINE_PROMPT)
    assert (offline.returncode, offline.stdout, offline.stderr) == (
        baseline.returncode,
        baseline.stdout,
        baseline.stderr,
    ), "with the plugin and the server stopped, the output differs from no plugin at all\n" + _shown(
        offline, project
    )
    await _wait_for_spool(project, OFFLINE_REPLY)

    # back on the same address, so the spooled batch finds it
    async with served_api(server_env, port=int(base.rsplit(":", 1)[1])) as api:
        assert api.base == base
        env = project.client_env(base, key)
        for _ in range(2):
            flushed = await _run([MEMORIA, "capture", "flush"], project.repo, env, 120)
            assert flushed.returncode == 0, _shown(flushed, project)
        episodes = [
            item for item in await _episodes(base, key, project.namespace) if OFFLINE_REPLY in item["content"]
        ]
        assert len(episodes) == 1, f"{episodes}\nhook log:\n{project.log()}"
        assert OFFLINE_PROMPT in episodes[0]["content"]
        assert episodes[0]["source"] == "opencode"
        assert OFFLINE_REPLY not in _spool_text(project), "the flushed exchange is still in the spool"
