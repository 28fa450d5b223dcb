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
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
)

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
class Project(AgentProject):
    """The test's repository and a HOME with the person's Qwen Code settings."""

    @property
    def settings(self) -> Path:
        return self.home / ".qwen" / "settings.json"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    home = tmp_path / "home"
    write_user_settings(home)
    repo = git_repo(tmp_path / "quokka-9", gateway=False)
    return Project(repo, home, tmp_path / "hook.log", tmp_path / "pgdata")


async def _install_hooks(project: Project, base: str, key: str) -> None:
    """`memoria hook install --agent qwen` into the person's own ~/.qwen/settings.json."""
    await memoria(project, base, key, "hook", "install", "--agent", "qwen", "--namespace", project.namespace)
    settings: dict[str, Any] = json.loads(project.settings.read_text())
    assert set(settings.get("hooks", {})) == HOOK_EVENTS, json.dumps(settings, indent=1)
    assert {k: v for k, v in settings.items() if k != "hooks"} == USER_SETTINGS


async def _qwen(
    qwen: str, project: Project, base: str, key: str, fake: FakeOpenAIChat, prompt: str = PROMPT
) -> subprocess.CompletedProcess[str]:
    env = project.client_env(base, key) | {"MEMORIA_CLIENT__CAPTURE_FLUSH": "inline"}
    return await run(
        qwen_argv(qwen, prompt), project.repo, qwen_env(env, project.home, fake.base_url), QWEN_TIMEOUT_S
    )


async def test_a_pinned_memory_and_a_captured_exchange_reach_the_requests_qwen_code_sends_the_model(
    project: Project, fake_model: FakeOpenAIChat
) -> None:
    qwen = await asyncio.to_thread(qwen_binary)
    async with served_api(project.server_env) as api:
        key = await create_key(project, "qwen")
        await store_pinned(api.base, key, project.namespace, PINNED_FACT)
        await _install_hooks(project, api.base, key)
        first = await _qwen(qwen, project, api.base, key, fake_model, WALRUS_PROMPT)
        turns = fake_model.completions()
        assert turns, f"Qwen Code never asked the model\n{shown(first, project)}"
        assert PINNED_FACT in json.dumps(turns[0]["messages"]), (
            f"Memoria's context did not reach the model's first request\n{shown(first, project)}"
        )
        assert (first.returncode, first.stdout.strip()) == (0, WALRUS_REPLY), shown(first, project)

        episode = await wait_for_episode(api.base, key, project, WALRUS_REPLY, CAPTURE_WAIT_S)
        assert WALRUS_PROMPT in episode["content"]
        assert PINNED_FACT not in episode["content"], "the injected context was captured as the prompt"
        assert episode["source"] == "qwen"

        before = len(fake_model.completions())
        following = await _qwen(qwen, project, api.base, key, fake_model, NEXT_PROMPT)
        asked = [t for t in fake_model.completions()[before:] if NEXT_PROMPT in json.dumps(t["messages"])]
        assert asked, f"the next session never asked the model\n{shown(following, project)}"
        assert "7341" in json.dumps(asked[0]["messages"]), (
            f"the captured exchange was not recalled in the next session\n{shown(following, project)}"
        )


async def test_with_the_server_stopped_qwen_code_prints_nothing_extra_and_the_spool_is_stored_once_later(
    project: Project, fake_model: FakeOpenAIChat
) -> None:
    qwen = await asyncio.to_thread(qwen_binary)
    stopped = await run_with_the_server_stopped(
        project,
        "qwen",
        lambda base, key: _qwen(qwen, project, base, key, fake_model),
        lambda base, key: _install_hooks(project, base, key),
    )
    # inline capture found no server: the exchange waits in the spool
    assert REPLY in project.spool_text(), f"the exchange is not in the spool\nhook log:\n{project.log()}"

    # back on the same address, so the installed hooks (and the spooled batch) find it
    await stored_once_after_restart(project, stopped, PROMPT, REPLY, "qwen")
