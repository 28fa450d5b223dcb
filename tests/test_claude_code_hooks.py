"""The real Claude Code (from npm) with every Memoria hook `memoria hook install` writes, against a real
`memoria serve` (embedded PostgreSQL), its model played by a fake Anthropic Messages API on 127.0.0.1.

1. SessionStart: a pinned memory of the project's namespace is in the first request the model gets.
2. Capture and recall: a session's exchange is captured (Stop / SessionEnd → spool → capture route)
   as an episode, and the NEXT session's prompt gets it through UserPromptSubmit.
3. Server stopped: `claude -p` prints exactly what it prints with no hooks installed, the exchange
   waits in the spool, and once the server is back `memoria capture flush` stores it once.

Runs are made deterministic with `MEMORIA_CLIENT__CAPTURE_FLUSH=inline` (the capture hook flushes
before it exits instead of leaving it to a detached flusher); the client state folder is the default
one under the test's own HOME. How Claude Code hands hook context to the model was read off the real
2.1.197: it adds "<Event> hook additional context: <text>" to the messages. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

import memoria_bench.serve as serve_module
from memoria_bench.clis.anthropic_api import FakeAnthropic, Reply, Text, ToolUse
from memoria_bench.clis.claude import CLAUDE_TIMEOUT_S, claude_binary, claude_env
from memoria_bench.serve import ServedApi, served_api
from tests.test_claude_code_mcp import MEMORIA

pytestmark = pytest.mark.e2e

PINNED_FACT = "Pinned: the quokka-9 project ships every release from the release-train branch only."
FIRST_PROMPT = "Which port does the walrus gateway of quokka-9 listen on? Check the repo first."
FIRST_REPLY = "The walrus gateway listens on port 7341 behind the amber proxy; see gateway.toml."
SECOND_PROMPT = "Remind me which port the walrus gateway listens on."
OFFLINE_PROMPT = "Note for later: the narwhal cache of quokka-9 is flushed every Tuesday at noon."
OFFLINE_REPLY = "Noted: the narwhal cache is flushed every Tuesday at noon."
CAPTURE_WAIT_S = 45
HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd")


@dataclass
class ModelScript:
    """The fake model: for FIRST_PROMPT one `ls` through Bash, then FIRST_REPLY; text otherwise."""

    replies: dict[str, str] = field(default_factory=dict)

    def __call__(self, body: dict[str, Any]) -> Reply:
        asked = json.dumps(body.get("messages", []))
        tools = {tool.get("name") for tool in body.get("tools", []) if isinstance(tool, dict)}
        if FIRST_PROMPT in asked and "Bash" in tools:
            if "toolu_hooks_ls" not in asked:
                return ToolUse("Bash", {"command": "ls", "description": "List files"}, id="toolu_hooks_ls")
            return Text(FIRST_REPLY)
        if OFFLINE_PROMPT in asked:
            return Text(OFFLINE_REPLY)
        return Text("Done.")


@pytest.fixture
def fake_model() -> Iterator[FakeAnthropic]:
    fake = FakeAnthropic(ModelScript()).start()
    yield fake
    fake.stop()


@dataclass
class Project:
    """A git repository, a HOME and a client state folder for one test, and the env to run in."""

    repo: Path
    home: Path
    state: Path
    hook_log: Path
    data_dir: Path

    @property
    def namespace(self) -> str:
        return f"repo:{self.repo.name}"

    def client_env(self, base: str, key: str) -> dict[str, str]:
        keep = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("MEMORIA_", "ANTHROPIC_", "CLAUDE", "XDG_"))
        }
        return keep | {
            "HOME": str(self.home),
            "MEMORIA_CLIENT__URL": base,
            "MEMORIA_CLIENT__API_KEY": key,
            "MEMORIA_CLIENT__HOOK_LOG": str(self.hook_log),
        }

    def claude_env(self, base: str, key: str, fake: FakeAnthropic) -> dict[str, str]:
        env = self.client_env(base, key) | {"MEMORIA_CLIENT__CAPTURE_FLUSH": "inline"}
        return claude_env(env, self.home, fake.url)

    def log(self) -> str:
        return self.hook_log.read_text()[-4000:] if self.hook_log.is_file() else "(no hook log)"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    repo = tmp_path / "quokka-9"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    (repo / "gateway.toml").write_text("[walrus]\nport = 7341\n")
    home = tmp_path / "home"
    home.mkdir()
    # the client state folder is the default one under this HOME (~/.local/state/memoria)
    state = home / ".local" / "state" / "memoria"
    return Project(repo, home, state, tmp_path / "hook.log", tmp_path / "pgdata")


async def _run(
    argv: list[str], cwd: Path, env: dict[str, str], limit_s: float, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a command in a worker thread, so the server's output keeps being read meanwhile."""
    return await asyncio.to_thread(
        subprocess.run,
        argv,
        cwd=cwd,
        env=env,
        input=stdin,
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


async def _create_key(project: Project, api: ServedApi) -> str:
    env = {**os.environ, "MEMORIA_DATABASE__DATA_DIR": str(project.data_dir), "HF_HUB_OFFLINE": "1"}
    created = await _run([MEMORIA, "keys", "create", "--user", "cc", "--create-user"], project.repo, env, 120)
    assert created.returncode == 0, created.stderr
    return created.stdout.strip()


async def _install_hooks(project: Project, base: str, key: str) -> dict[str, Any]:
    """`memoria hook install --scope project`; the settings file it wrote."""
    installed = await _run(
        [MEMORIA, "hook", "install", "--scope", "project", "--namespace", project.namespace],
        project.repo,
        project.client_env(base, key),
        120,
    )
    assert installed.returncode == 0, f"{installed.stdout}\n{installed.stderr}"
    settings: dict[str, Any] = json.loads((project.repo / ".claude" / "settings.json").read_text())
    assert set(HOOK_EVENTS) <= set(settings.get("hooks", {})), json.dumps(settings, indent=1)
    return settings


async def _claude(
    claude: str, project: Project, base: str, key: str, fake: FakeAnthropic, prompt: str
) -> subprocess.CompletedProcess[str]:
    return await _run(
        [claude, "-p", prompt, "--allowedTools", "Bash"],
        project.repo,
        project.claude_env(base, key, fake),
        CLAUDE_TIMEOUT_S,
    )


def _texts(value: Any) -> Iterator[str]:
    """Every string inside a request body's messages (content blocks, system-reminder texts …)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)


def hook_context(body: dict[str, Any], event: str) -> str:
    """What the `event` hook added to the request, as Claude Code words it ("<event> hook additional
    context: …"), up to the next hook's addition; empty when it added nothing."""
    marker = f"{event} hook additional context:"
    found: list[str] = []
    for text in _texts(body.get("messages", [])):
        start = text.find(marker)
        while start >= 0:
            rest = text[start + len(marker) :]
            found.append(rest.split(" hook additional context:")[0])
            start = text.find(marker, start + len(marker))
    return "\n".join(found)


def _asked(fake: FakeAnthropic, prompt: str, since: int = 0) -> list[dict[str, Any]]:
    """The requests to the model (after the first `since`) that carry `prompt`."""
    return [body for body in fake.messages()[since:] if prompt in json.dumps(body.get("messages", []))]


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


async def _wait_for_episode(
    base: str, key: str, namespace: str, text: str, project: Project
) -> dict[str, Any]:
    """The episode holding `text`, waited for (the Stop hook is async) at most CAPTURE_WAIT_S."""
    deadline = time.monotonic() + CAPTURE_WAIT_S
    seen: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        seen = await _episodes(base, key, namespace)
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


async def test_session_start_context_and_a_captured_exchange_reach_the_next_session(
    tmp_path: Path, project: Project, fake_model: FakeAnthropic
) -> None:
    claude = await asyncio.to_thread(claude_binary)
    async with served_api({"MEMORIA_DATABASE__DATA_DIR": str(project.data_dir)}) as api:
        key = await _create_key(project, api)
        async with httpx.AsyncClient(base_url=api.base, timeout=60) as http:
            stored = await http.post(
                "/v1/memories",
                json={"content": PINNED_FACT, "namespace": project.namespace, "pinned": True},
                headers={"Authorization": f"Bearer {key}"},
            )
        assert stored.status_code == 201, stored.text
        await _install_hooks(project, api.base, key)

        first = await _claude(claude, project, api.base, key, fake_model, FIRST_PROMPT)
        asked = _asked(fake_model, FIRST_PROMPT)
        assert asked, f"the first session never asked the model\n{_shown(first, project)}"
        assert PINNED_FACT in hook_context(asked[0], "SessionStart"), (
            f"SessionStart did not bring the pinned memory to the first request\n{_shown(first, project)}"
        )
        assert FIRST_REPLY in first.stdout, _shown(first, project)
        assert first.returncode == 0, _shown(first, project)

        episode = await _wait_for_episode(api.base, key, project.namespace, FIRST_REPLY, project)
        assert FIRST_PROMPT in episode["content"]
        assert episode["kind"] == "episode"
        assert episode["expires_at"] is not None

        before = len(fake_model.messages())
        second = await _claude(claude, project, api.base, key, fake_model, SECOND_PROMPT)
        asked_then = _asked(fake_model, SECOND_PROMPT, before)
        assert asked_then, f"the second session never asked the model\n{_shown(second, project)}"
        # the prompt's recall brings it (a new session starts with no other sessions' episodes)
        started = hook_context(asked_then[0], "SessionStart")
        recalled = hook_context(asked_then[0], "UserPromptSubmit")
        assert ("7341" in started, "7341" in recalled) == (False, True), (
            f"the captured exchange did not reach the next session once: {started[:1500]!r}, "
            f"{recalled[:1500]!r}\n" + _shown(second, project)
        )
        assert second.returncode == 0, _shown(second, project)


async def test_with_the_server_stopped_claude_prints_nothing_extra_and_the_spool_is_stored_once_later(
    tmp_path: Path, project: Project, fake_model: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude = await asyncio.to_thread(claude_binary)
    server_env = {"MEMORIA_DATABASE__DATA_DIR": str(project.data_dir)}
    async with served_api(server_env) as api:
        base = api.base
        key = await _create_key(project, api)
        baseline = await _claude(claude, project, base, key, fake_model, OFFLINE_PROMPT)
        assert baseline.returncode == 0, _shown(baseline, project)
        await _install_hooks(project, base, key)

    # the server is stopped: the hooks find nothing at `base`
    offline = await _claude(claude, project, base, key, fake_model, OFFLINE_PROMPT)
    assert (offline.returncode, offline.stdout, offline.stderr) == (
        baseline.returncode,
        baseline.stdout,
        baseline.stderr,
    ), "with hooks and the server stopped, the output differs from no hooks at all\n" + _shown(
        offline, project
    )
    assert OFFLINE_REPLY in _spool_text(project), (
        f"the exchange is not in the spool\nhook log:\n{project.log()}"
    )

    # back on the same address, so the installed hooks (and the spooled batches) find it
    port = int(base.rsplit(":", 1)[1])
    monkeypatch.setattr(serve_module, "free_port", lambda: port)
    async with served_api(server_env) as api:
        assert api.base == base
        env = project.client_env(base, key)
        flushed = await _run([MEMORIA, "capture", "flush"], project.repo, env, 120)
        assert flushed.returncode == 0, _shown(flushed, project)
        again = await _run([MEMORIA, "capture", "flush"], project.repo, env, 120)
        assert again.returncode == 0, _shown(again, project)
        episodes = [
            item for item in await _episodes(base, key, project.namespace) if OFFLINE_REPLY in item["content"]
        ]
        assert len(episodes) == 1, f"{episodes}\nhook log:\n{project.log()}"
        assert OFFLINE_PROMPT in episodes[0]["content"]
        assert OFFLINE_REPLY not in _spool_text(project), "the flushed exchange is still in the spool"
