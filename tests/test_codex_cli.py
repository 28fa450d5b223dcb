"""The real Codex CLI (from npm) with the hooks `memoria hook install --agent codex` writes, against a
real `memoria serve` (embedded PostgreSQL), its model played by a fake OpenAI Responses API on
127.0.0.1 (a `model_provider` of the person's own `config.toml`, `wire_api = "responses"`).

1. SessionStart: a pinned memory of the project's namespace is in the first request the model gets
   (Codex adds hook context as a developer message).
2. Capture and recall: a session's exchange (with an `exec_command` call) is captured at Stop from
   Codex's session file as an episode whose source is `codex`, and the NEXT session's prompt gets it
   through UserPromptSubmit.
3. The MCP store tool: with `memoria mcp install --agent codex --approve-tools`, a third session's
   model calls `memory_store` (in Codex's `mcp__memoria` tool namespace) and the memory is stored.
4. Server stopped: `codex exec` prints what it prints with the same hooks and nothing to say (Codex's
   own "hook: <event>" progress lines aside, which it prints for any hook), the exchange waits in
   the spool, and once the server is back `memoria capture flush` stores it once.

The hooks run with Codex's trust check on: the install's trust entries are what let them run
(`codex exec` skips an untrusted hook without a word). Runs are deterministic with
`MEMORIA_CLIENT__CAPTURE_FLUSH=inline`. Codex is found at `$CODEX_BIN`, else installed by
`.ci/codex.sh --install-only`. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

import memoria_bench.serve as serve_module
from memoria_bench.clis.codex import (
    CODEX_TIMEOUT_S,
    codex_argv,
    codex_binary,
    codex_env,
    codex_home,
    write_provider,
)
from memoria_bench.clis.responses_api import FakeResponses, FunctionCall, Reply, Text
from memoria_bench.serve import served_api
from tests.test_claude_code_mcp import MEMORIA

pytestmark = pytest.mark.e2e

PINNED_FACT = "Pinned: the quokka-9 project ships every release from the release-train branch only."
FIRST_PROMPT = "Which port does the walrus gateway of quokka-9 listen on? Check the repo first."
FIRST_REPLY = "The walrus gateway listens on port 7341 behind the amber proxy; see gateway.toml."
SECOND_PROMPT = "Remind me which port the walrus gateway listens on."
STORE_PROMPT = "Remember for later sessions: zebra-17 deploys with Terraform only."
STORED_FACT = "The zebra-17 service of quokka-9 is deployed with Terraform only; never kubectl apply by hand."
OFFLINE_PROMPT = "Note for later: the narwhal cache of quokka-9 is flushed every Tuesday at noon."
OFFLINE_REPLY = "Noted: the narwhal cache is flushed every Tuesday at noon."
#: How each Memoria context starts (app.hooks.start_context, app.hooks.context).
START_HEADER = "Memoria: memories of namespace"
PROMPT_HEADER = "Memories recalled by Memoria"


def script(body: dict[str, Any]) -> Reply:
    """The fake model: for FIRST_PROMPT one `ls` through exec_command, then FIRST_REPLY; for
    STORE_PROMPT one `memory_store` call; text otherwise."""
    asked = json.dumps(body.get("input", []))
    if STORE_PROMPT in asked:
        if "function_call_output" not in asked:
            memories = {"memories": [{"content": STORED_FACT}], "namespace": "repo:quokka-9"}
            return FunctionCall("memory_store", memories, call_id="call_store", namespace="mcp__memoria")
        return Text("Stored.")
    if FIRST_PROMPT in asked:
        if "function_call_output" not in asked:
            return FunctionCall("exec_command", {"cmd": "ls"}, call_id="call_hooks_ls")
        return Text(FIRST_REPLY)
    if OFFLINE_PROMPT in asked:
        return Text(OFFLINE_REPLY)
    return Text("Done.")


@pytest.fixture
def fake_model() -> Iterator[FakeResponses]:
    fake = FakeResponses(script).start()
    yield fake
    fake.stop()


@dataclass
class Project:
    """A git repository, a HOME (with Codex's config folder) and a hook log for one test."""

    repo: Path
    home: Path
    hook_log: Path
    data_dir: Path

    @property
    def namespace(self) -> str:
        return f"repo:{self.repo.name}"

    @property
    def codex_home(self) -> Path:
        return codex_home(self.home)

    @property
    def state(self) -> Path:
        return self.home / ".local" / "state" / "memoria"

    def client_env(self, base: str, key: str) -> dict[str, str]:
        keep = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("MEMORIA_", "OPENAI_", "CODEX", "XDG_", "CLAUDE"))
        }
        return keep | {
            "HOME": str(self.home),
            "CODEX_HOME": str(self.codex_home),
            "MEMORIA_CLIENT__URL": base,
            "MEMORIA_CLIENT__API_KEY": key,
            "MEMORIA_CLIENT__HOOK_LOG": str(self.hook_log),
        }

    def codex_env(self, base: str, key: str) -> dict[str, str]:
        env = self.client_env(base, key) | {"MEMORIA_CLIENT__CAPTURE_FLUSH": "inline"}
        return codex_env(env, self.home)

    def write_provider(self, fake: FakeResponses) -> None:
        """The person's own Codex settings: the fake model as a custom provider, telemetry off."""
        write_provider(self.home, fake.url)

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
    return Project(repo, home, tmp_path / "hook.log", tmp_path / "pgdata")


async def run_command(
    argv: list[str], cwd: Path, env: dict[str, str], limit_s: float
) -> subprocess.CompletedProcess[str]:
    """Run a command in a worker thread, so the server's output keeps being read meanwhile."""
    return await asyncio.to_thread(
        subprocess.run,
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=limit_s,
        check=False,
    )


def shown(run: subprocess.CompletedProcess[str], project: Project) -> str:
    return (
        f"exit {run.returncode}\nstdout:\n{run.stdout[-3000:]}\nstderr:\n{run.stderr[-3000:]}\n"
        f"hook log:\n{project.log()}"
    )


async def create_key(project: Project) -> str:
    env = {**os.environ, "MEMORIA_DATABASE__DATA_DIR": str(project.data_dir), "HF_HUB_OFFLINE": "1"}
    created = await run_command(
        [MEMORIA, "keys", "create", "--user", "cx", "--create-user"], project.repo, env, 120
    )
    assert created.returncode == 0, created.stderr
    return created.stdout.strip()


async def _install_hooks(project: Project, base: str, key: str) -> None:
    """`memoria hook install --agent codex` (user scope: the namespace is worked out per event)."""
    installed = await run_command(
        [MEMORIA, "hook", "install", "--agent", "codex"], project.repo, project.client_env(base, key), 120
    )
    assert installed.returncode == 0, f"{installed.stdout}\n{installed.stderr}"


async def _codex(
    codex: str, project: Project, base: str, key: str, prompt: str
) -> subprocess.CompletedProcess[str]:
    return await run_command(
        codex_argv(codex, prompt),
        project.repo,
        project.codex_env(base, key),
        CODEX_TIMEOUT_S,
    )


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)


def memoria_context(body: dict[str, Any], header: str) -> str:
    """The Memoria context in the request's input that starts with `header` ("" when none)."""
    return "\n".join(text for text in _texts(body.get("input", [])) if text.startswith(header))


def _asked(fake: FakeResponses, prompt: str, since: int = 0) -> list[dict[str, Any]]:
    return [body for body in fake.responses()[since:] if prompt in json.dumps(body.get("input", []))]


async def list_episodes(base: str, key: str, namespace: str) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        page = await http.get(
            "/v1/memories",
            params={"namespace": namespace, "kind": "episode", "limit": 100},
            headers={"Authorization": f"Bearer {key}"},
        )
    assert page.status_code == 200, page.text
    items: list[dict[str, Any]] = page.json()["items"]
    return items


def _spool_text(project: Project) -> str:
    spool = project.state / "spool.json"
    return spool.read_text() if spool.is_file() else ""


async def test_context_capture_recall_and_the_store_tool_across_codex_sessions(
    project: Project, fake_model: FakeResponses
) -> None:
    codex = await asyncio.to_thread(codex_binary)
    project.write_provider(fake_model)
    async with served_api({"MEMORIA_DATABASE__DATA_DIR": str(project.data_dir)}) as api:
        key = await create_key(project)
        async with httpx.AsyncClient(base_url=api.base, timeout=60) as http:
            stored = await http.post(
                "/v1/memories",
                json={"content": PINNED_FACT, "namespace": project.namespace, "pinned": True},
                headers={"Authorization": f"Bearer {key}"},
            )
        assert stored.status_code == 201, stored.text
        await _install_hooks(project, api.base, key)

        first = await _codex(codex, project, api.base, key, FIRST_PROMPT)
        asked = _asked(fake_model, FIRST_PROMPT)
        assert asked, f"the first session never asked the model\n{shown(first, project)}"
        assert PINNED_FACT in memoria_context(asked[0], START_HEADER), (
            f"SessionStart did not bring the pinned memory to the first request\n{shown(first, project)}"
        )
        assert FIRST_REPLY in first.stdout and first.returncode == 0, shown(first, project)

        # captured at Stop (inline flush): there before the next session starts
        episodes = [
            e for e in await list_episodes(api.base, key, project.namespace) if FIRST_REPLY in e["content"]
        ]
        assert len(episodes) == 1, f"{episodes}\nspool: {_spool_text(project)}\n{shown(first, project)}"
        assert FIRST_PROMPT in episodes[0]["content"]
        assert (episodes[0]["source"], episodes[0]["tags"]) == ("codex", ["codex"])

        before = len(fake_model.responses())
        second = await _codex(codex, project, api.base, key, SECOND_PROMPT)
        asked_then = _asked(fake_model, SECOND_PROMPT, before)
        assert asked_then, f"the second session never asked the model\n{shown(second, project)}"
        started = memoria_context(asked_then[0], START_HEADER)
        recalled = memoria_context(asked_then[0], PROMPT_HEADER)
        assert ("7341" in started, "7341" in recalled) == (False, True), (
            f"the captured exchange did not reach the next session once: {started[:1500]!r}, "
            f"{recalled[:1500]!r}\n" + shown(second, project)
        )
        assert second.returncode == 0, shown(second, project)

        mcp = await run_command(
            [MEMORIA, "mcp", "install", "--agent", "codex", "--approve-tools"],
            project.repo,
            project.client_env(api.base, key),
            120,
        )
        assert mcp.returncode == 0, f"{mcp.stdout}\n{mcp.stderr}"
        before = len(fake_model.responses())
        third = await _codex(codex, project, api.base, key, STORE_PROMPT)
        results = [
            item
            for body in fake_model.responses()[before:]
            for item in body.get("input", [])
            if item.get("type") == "function_call_output" and item.get("call_id") == "call_store"
        ]
        assert results, f"Codex never answered the store call\n{shown(third, project)}"
        async with httpx.AsyncClient(base_url=api.base, timeout=30) as http:
            page = await http.get(
                "/v1/memories",
                params={"namespace": project.namespace, "limit": 100},
                headers={"Authorization": f"Bearer {key}"},
            )
        stored_now = [item for item in page.json()["items"] if item["content"] == STORED_FACT]
        assert len(stored_now) == 1, f"{results}\n{shown(third, project)}"


_SESSION_LINE = re.compile(r"^session id: .*$", re.MULTILINE)
_HOOK_LINE = re.compile(r"^hook: (SessionStart|UserPromptSubmit|Stop)( Completed)?\n", re.MULTILINE)


def _screen(run: subprocess.CompletedProcess[str]) -> tuple[int, str, str]:
    """What a person sees, less the session id and Codex's own progress lines for hooks."""
    return run.returncode, run.stdout, _HOOK_LINE.sub("", _SESSION_LINE.sub("session id: …", run.stderr))


async def test_with_the_server_stopped_codex_prints_nothing_extra_and_the_spool_is_stored_once_later(
    project: Project, fake_model: FakeResponses, monkeypatch: pytest.MonkeyPatch
) -> None:
    codex = await asyncio.to_thread(codex_binary)
    project.write_provider(fake_model)
    server_env = {"MEMORIA_DATABASE__DATA_DIR": str(project.data_dir)}
    async with served_api(server_env) as api:
        base = api.base
        key = await create_key(project)
        baseline = await _codex(codex, project, base, key, OFFLINE_PROMPT)
        assert baseline.returncode == 0, shown(baseline, project)
        await _install_hooks(project, base, key)

    # the server is stopped: the hooks find nothing at `base`
    offline = await _codex(codex, project, base, key, OFFLINE_PROMPT)
    assert _screen(offline) == _screen(baseline), (
        "with hooks and the server stopped, the output differs from no hooks at all\n"
        + shown(offline, project)
    )
    hook_lines = _HOOK_LINE.findall(offline.stderr)
    assert ("Stop", " Completed") in hook_lines, "the hooks did not run (untrusted?)\n" + shown(
        offline, project
    )
    assert OFFLINE_REPLY in _spool_text(project), (
        f"the exchange is not in the spool\nhook log:\n{project.log()}"
    )

    # back on the same address, so the spooled batches find it
    port = int(base.rsplit(":", 1)[1])
    monkeypatch.setattr(serve_module, "free_port", lambda: port)
    async with served_api(server_env) as api:
        assert api.base == base
        env = project.client_env(base, key)
        flushed = await run_command([MEMORIA, "capture", "flush"], project.repo, env, 120)
        assert flushed.returncode == 0, shown(flushed, project)
        again = await run_command([MEMORIA, "capture", "flush"], project.repo, env, 120)
        assert again.returncode == 0, shown(again, project)
        episodes = [
            item
            for item in await list_episodes(base, key, project.namespace)
            if OFFLINE_REPLY in item["content"]
        ]
        assert len(episodes) == 1, f"{episodes}\nhook log:\n{project.log()}"
        assert (episodes[0]["source"], OFFLINE_PROMPT in episodes[0]["content"]) == ("codex", True)
        assert OFFLINE_REPLY not in _spool_text(project), "the flushed exchange is still in the spool"
