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
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memoria_bench.clis.copilot import COPILOT_TIMEOUT_S, copilot_argv, copilot_binary, copilot_env
from memoria_bench.clis.openai_chat_api import FakeOpenAIChat
from memoria_bench.serve import served_api
from tests.real_cli import (
    AgentProject,
    create_key,
    git_repo,
    memoria,
    run,
    run_with_the_server_stopped,
    shown,
    store_pinned,
    stored_once_after_restart,
    wait_for_episode,
    wait_for_spool,
)

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
class Project(AgentProject):
    """The test's repository and a HOME with a hook file of the person's own."""

    @property
    def hooks(self) -> Path:
        return self.home / ".copilot" / "hooks"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    home = tmp_path / "home"
    (home / ".copilot" / "hooks").mkdir(parents=True)
    (home / ".copilot" / "hooks" / "theirs.json").write_text(THEIR_HOOKS)
    repo = git_repo(tmp_path / "wombat-4", gateway=False)
    return Project(repo, home, tmp_path / "hook.log", tmp_path / "pgdata")


async def _install_hooks(project: Project, base: str, key: str) -> None:
    """`memoria hook install --agent copilot` into ~/.copilot/hooks/memoria.json."""
    await memoria(
        project, base, key, "hook", "install", "--agent", "copilot", "--namespace", project.namespace
    )
    ours: dict[str, Any] = json.loads((project.hooks / "memoria.json").read_text())
    assert set(ours.get("hooks", {})) == HOOK_EVENTS, json.dumps(ours, indent=1)
    assert (project.hooks / "theirs.json").read_text() == THEIR_HOOKS


async def _copilot(
    copilot: str, project: Project, base: str, key: str, fake: FakeOpenAIChat
) -> subprocess.CompletedProcess[str]:
    env = copilot_env(project.client_env(base, key), project.home, copilot, fake.base_url)
    return await run(copilot_argv(copilot, PROMPT), project.repo, env, COPILOT_TIMEOUT_S)


async def test_a_pinned_memory_reaches_the_first_request_copilot_cli_sends_the_model(
    project: Project, fake_model: FakeOpenAIChat
) -> None:
    copilot = await asyncio.to_thread(copilot_binary)
    async with served_api(project.server_env) as api:
        key = await create_key(project, "copilot")
        await store_pinned(api.base, key, project.namespace, PINNED_FACT)
        await _install_hooks(project, api.base, key)
        run = await _copilot(copilot, project, api.base, key, fake_model)
    turns = fake_model.completions()
    assert turns, f"Copilot CLI never asked the model\n{shown(run, project)}"
    assert PINNED_FACT in json.dumps(turns[0]["messages"]), (
        f"Memoria's context did not reach the model's first request\n{shown(run, project)}"
    )
    assert (run.returncode, run.stdout.strip()) == (0, REPLY), shown(run, project)


async def test_with_the_server_stopped_copilot_cli_prints_nothing_extra_and_the_spool_is_stored_once_later(
    project: Project, fake_model: FakeOpenAIChat
) -> None:
    copilot = await asyncio.to_thread(copilot_binary)
    stopped = await run_with_the_server_stopped(
        project,
        "copilot",
        lambda base, key: _copilot(copilot, project, base, key, fake_model),
        lambda base, key: _install_hooks(project, base, key),
    )
    # the hooks did run, and said why they stayed silent where the person can look
    assert project.hook_log.is_file() and project.hook_log.read_text().strip(), shown(
        stopped.offline, project
    )
    # capture found no server: the exchange waits in the spool
    await wait_for_spool(project, REPLY, SPOOL_WAIT_S)

    # back on the same address, so the installed hooks (and the spooled batch) find it
    await stored_once_after_restart(project, stopped, PROMPT, REPLY, "copilot")


FIRST_PROMPT = "Which port does the walrus gateway of wombat-4 listen on? It is in gateway.toml."
FIRST_REPLY = "The walrus gateway listens on port 7341 behind the amber proxy, as gateway.toml says."
SECOND_PROMPT = "Remind me which port the walrus gateway listens on."
CAPTURE_WAIT_S = 45


def _answers(body: dict[str, Any]) -> str:
    """The first session's prompt gets the gateway answer; anything else a short text."""
    return FIRST_REPLY if FIRST_PROMPT in json.dumps(body.get("messages", [])) else "Port 7341."


async def test_an_exchange_captured_at_agent_stop_reaches_the_next_copilot_session(project: Project) -> None:
    copilot = await asyncio.to_thread(copilot_binary)
    fake = FakeOpenAIChat(_answers).start()
    try:
        async with served_api(project.server_env) as api:
            key = await create_key(project, "copilot")
            await _install_hooks(project, api.base, key)
            env = copilot_env(project.client_env(api.base, key), project.home, copilot, fake.base_url)

            first = await run(copilot_argv(copilot, FIRST_PROMPT), project.repo, env, COPILOT_TIMEOUT_S)
            assert (first.returncode, first.stdout.strip()) == (0, FIRST_REPLY), shown(first, project)
            episode = await wait_for_episode(api.base, key, project, "7341", CAPTURE_WAIT_S, source="copilot")
            assert FIRST_PROMPT in episode["content"], episode["content"]
            assert (episode["kind"], episode["source"]) == ("episode", "copilot")

            before = len(fake.completions())
            second = await run(copilot_argv(copilot, SECOND_PROMPT), project.repo, env, COPILOT_TIMEOUT_S)
            asked = [turn for turn in fake.completions()[before:] if SECOND_PROMPT in json.dumps(turn)]
            assert asked, f"the second session never asked the model\n{shown(second, project)}"
            assert "7341" in json.dumps(asked[0]["messages"]), (
                f"the captured exchange did not reach the next session\n{shown(second, project)}"
            )
            assert second.returncode == 0, shown(second, project)
    finally:
        fake.stop()
