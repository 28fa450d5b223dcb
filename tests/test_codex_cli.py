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
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from memoria_bench.clis.codex import (
    CODEX_TIMEOUT_S,
    codex_argv,
    codex_binary,
    codex_env,
    codex_home,
    write_provider,
)
from memoria_bench.clis.model_api import texts
from memoria_bench.clis.responses_api import FakeResponses, FunctionCall, Reply, Text
from memoria_bench.serve import served_api
from tests.real_cli import (
    AgentProject,
    create_key,
    episodes,
    git_repo,
    memoria,
    run,
    run_with_the_server_stopped,
    shown,
    store_pinned,
    stored_once_after_restart,
)

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
class Project(AgentProject):
    """The test's repository and HOME, with Codex's config folder; Codex's variables of the test's
    environment (and Claude Code's) left out."""

    DROPPED_ENV = ("MEMORIA_", "OPENAI_", "CODEX", "XDG_", "CLAUDE")

    @property
    def codex_home(self) -> Path:
        return codex_home(self.home)

    def client_env(self, base: str, key: str) -> dict[str, str]:
        return super().client_env(base, key) | {"CODEX_HOME": str(self.codex_home)}

    def codex_env(self, base: str, key: str) -> dict[str, str]:
        env = self.client_env(base, key) | {"MEMORIA_CLIENT__CAPTURE_FLUSH": "inline"}
        return codex_env(env, self.home)

    def write_provider(self, fake: FakeResponses) -> None:
        """The person's own Codex settings: the fake model as a custom provider, telemetry off."""
        write_provider(self.home, fake.url)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    home = tmp_path / "home"
    home.mkdir()
    return Project(git_repo(tmp_path / "quokka-9"), home, tmp_path / "hook.log", tmp_path / "pgdata")


async def _install_hooks(project: Project, base: str, key: str) -> None:
    """`memoria hook install --agent codex` (user scope: the namespace is worked out per event)."""
    await memoria(project, base, key, "hook", "install", "--agent", "codex")


async def _codex(
    codex: str, project: Project, base: str, key: str, prompt: str
) -> subprocess.CompletedProcess[str]:
    return await run(
        codex_argv(codex, prompt),
        project.repo,
        project.codex_env(base, key),
        CODEX_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )


def memoria_context(body: dict[str, Any], header: str) -> str:
    """The Memoria context in the request's input that starts with `header` ("" when none)."""
    return "\n".join(text for text in texts(body.get("input", [])) if text.startswith(header))


def _asked(fake: FakeResponses, prompt: str, since: int = 0) -> list[dict[str, Any]]:
    return [body for body in fake.responses()[since:] if prompt in json.dumps(body.get("input", []))]


async def test_context_capture_recall_and_the_store_tool_across_codex_sessions(
    project: Project, fake_model: FakeResponses
) -> None:
    codex = await asyncio.to_thread(codex_binary)
    project.write_provider(fake_model)
    async with served_api(project.server_env) as api:
        key = await create_key(project, "cx")
        await store_pinned(api.base, key, project.namespace, PINNED_FACT)
        await _install_hooks(project, api.base, key)

        first = await _codex(codex, project, api.base, key, FIRST_PROMPT)
        asked = _asked(fake_model, FIRST_PROMPT)
        assert asked, f"the first session never asked the model\n{shown(first, project)}"
        assert PINNED_FACT in memoria_context(asked[0], START_HEADER), (
            f"SessionStart did not bring the pinned memory to the first request\n{shown(first, project)}"
        )
        assert FIRST_REPLY in first.stdout and first.returncode == 0, shown(first, project)

        # captured at Stop (inline flush): there before the next session starts
        captured = [
            e for e in await episodes(api.base, key, project.namespace) if FIRST_REPLY in e["content"]
        ]
        assert len(captured) == 1, f"{captured}\nspool: {project.spool_text()}\n{shown(first, project)}"
        assert FIRST_PROMPT in captured[0]["content"]
        assert (captured[0]["source"], captured[0]["tags"]) == ("codex", ["codex"])

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

        await memoria(project, api.base, key, "mcp", "install", "--agent", "codex", "--approve-tools")
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
    project: Project, fake_model: FakeResponses
) -> None:
    codex = await asyncio.to_thread(codex_binary)
    project.write_provider(fake_model)
    stopped = await run_with_the_server_stopped(
        project,
        "cx",
        lambda base, key: _codex(codex, project, base, key, OFFLINE_PROMPT),
        lambda base, key: _install_hooks(project, base, key),
        _screen,
    )
    hook_lines = _HOOK_LINE.findall(stopped.offline.stderr)
    assert ("Stop", " Completed") in hook_lines, "the hooks did not run (untrusted?)\n" + shown(
        stopped.offline, project
    )
    assert OFFLINE_REPLY in project.spool_text(), (
        f"the exchange is not in the spool\nhook log:\n{project.log()}"
    )

    # back on the same address, so the spooled batches find it
    await stored_once_after_restart(project, stopped, OFFLINE_PROMPT, OFFLINE_REPLY, "codex")
