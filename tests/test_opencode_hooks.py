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
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memoria_bench.clis.opencode import (
    OPENCODE_TIMEOUT_S,
    config_file,
    opencode_argv,
    opencode_binary,
    opencode_env,
    settle_config_folder,
    write_user_config,
)
from memoria_bench.serve import served_api
from tests.fakes.openai_chat_tools import FakeOpenAIChatTools, ToolCall, offered_tools, tool_results
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
class Project(AgentProject):
    """The test's repository and a HOME with the person's opencode.json."""

    @property
    def plugin(self) -> Path:
        return self.home / ".config" / "opencode" / "plugins" / "memoria.js"


@pytest.fixture
def project(tmp_path: Path, fake_model: FakeOpenAIChatTools) -> Project:
    home = tmp_path / "home"
    write_user_config(home, fake_model.base_url)
    # as after OpenCode's first start online: no session waits for an npm install failing offline
    settle_config_folder(home, opencode_binary())
    return Project(git_repo(tmp_path / "wombat-4"), home, tmp_path / "hook.log", tmp_path / "pgdata")


async def _install_plugin(project: Project, base: str, key: str) -> None:
    """`memoria hook install --agent opencode` into the person's own OpenCode config folder."""
    config = config_file(project.home).read_bytes()
    installed = await memoria(
        project, base, key, "hook", "install", "--agent", "opencode", "--namespace", project.namespace
    )
    assert project.plugin.is_file(), installed.stderr
    assert config_file(project.home).read_bytes() == config


async def _opencode(
    opencode: str, project: Project, base: str, key: str, prompt: str
) -> subprocess.CompletedProcess[str]:
    """`opencode run` in the repository, `PWD` naming it as a shell there would: OpenCode takes its
    project folder (the one its plugin reports as the session's cwd) from `PWD`, not from the
    process's directory."""
    env = opencode_env(project.client_env(base, key), project.home) | {"PWD": str(project.repo)}
    return await run(opencode_argv(opencode, prompt), project.repo, env, OPENCODE_TIMEOUT_S)


def _asked(fake: FakeOpenAIChatTools, prompt: str, since: int = 0) -> list[dict[str, Any]]:
    """The model's turns (after the first `since`, title requests left out) that carry `prompt`."""
    return [
        body
        for body in fake.completions()[since:]
        if body.get("tools") and prompt in json.dumps(body.get("messages", []))
    ]


async def test_a_pinned_memory_and_a_captured_exchange_reach_the_next_opencode_session(
    project: Project, fake_model: FakeOpenAIChatTools
) -> None:
    opencode = await asyncio.to_thread(opencode_binary)
    async with served_api(project.server_env) as api:
        key = await create_key(project, "opencode")
        await store_pinned(api.base, key, project.namespace, PINNED_FACT)
        await _install_plugin(project, api.base, key)

        first = await _opencode(opencode, project, api.base, key, FIRST_PROMPT)
        asked = _asked(fake_model, FIRST_PROMPT)
        assert asked, f"OpenCode never asked the model\n{shown(first, project)}"
        assert PINNED_FACT in json.dumps(asked[0]["messages"]), (
            f"Memoria's context did not reach the model's first request\n{shown(first, project)}"
        )
        assert (first.returncode, first.stdout.strip()) == (0, FIRST_REPLY), shown(first, project)
        assert PINNED_FACT not in first.stdout + first.stderr, shown(first, project)

        episode = await wait_for_episode(api.base, key, project, FIRST_REPLY, CAPTURE_WAIT_S)
        assert FIRST_PROMPT in episode["content"]
        assert PINNED_FACT not in episode["content"], "the injected context was captured as the prompt"
        assert (episode["kind"], episode["source"]) == ("episode", "opencode")
        assert episode["metadata"]["cwd"] == str(project.repo), "the plugin reported another project folder"

        before = len(fake_model.completions())
        second = await _opencode(opencode, project, api.base, key, SECOND_PROMPT)
        asked_then = _asked(fake_model, SECOND_PROMPT, before)
        assert asked_then, f"the second session never asked the model\n{shown(second, project)}"
        assert "7341" in json.dumps(asked_then[0]["messages"]), (
            f"the captured exchange did not reach the next session\n{shown(second, project)}"
        )
        assert second.returncode == 0, shown(second, project)


async def test_with_the_server_stopped_opencode_prints_what_it_prints_without_the_plugin_and_loses_nothing(
    project: Project, fake_model: FakeOpenAIChatTools
) -> None:
    opencode = await asyncio.to_thread(opencode_binary)
    stopped = await run_with_the_server_stopped(
        project,
        "opencode",
        lambda base, key: _opencode(opencode, project, base, key, OFFLINE_PROMPT),
        lambda base, key: _install_plugin(project, base, key),
    )
    await wait_for_spool(project, OFFLINE_REPLY, CAPTURE_WAIT_S)

    # back on the same address, so the spooled batch finds it
    await stored_once_after_restart(project, stopped, OFFLINE_PROMPT, OFFLINE_REPLY, "opencode")
