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
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from memoria_bench.clis.anthropic_api import FakeAnthropic, Reply, Text, ToolUse
from memoria_bench.clis.claude import CLAUDE_TIMEOUT_S, claude_binary, claude_env
from memoria_bench.clis.model_api import texts
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
class Project(AgentProject):
    """The test's repository and HOME; Claude Code's variables of the test's environment left out."""

    DROPPED_ENV = ("MEMORIA_", "ANTHROPIC_", "CLAUDE", "XDG_")

    def claude_env(self, base: str, key: str, fake: FakeAnthropic) -> dict[str, str]:
        env = self.client_env(base, key) | {"MEMORIA_CLIENT__CAPTURE_FLUSH": "inline"}
        return claude_env(env, self.home, fake.url)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    home = tmp_path / "home"
    home.mkdir()
    return Project(git_repo(tmp_path / "quokka-9"), home, tmp_path / "hook.log", tmp_path / "pgdata")


async def _install_hooks(project: Project, base: str, key: str) -> dict[str, Any]:
    """`memoria hook install --scope project`; the settings file it wrote."""
    await memoria(
        project, base, key, "hook", "install", "--scope", "project", "--namespace", project.namespace
    )
    settings: dict[str, Any] = json.loads((project.repo / ".claude" / "settings.json").read_text())
    assert set(HOOK_EVENTS) <= set(settings.get("hooks", {})), json.dumps(settings, indent=1)
    return settings


async def _claude(
    claude: str, project: Project, base: str, key: str, fake: FakeAnthropic, prompt: str
) -> subprocess.CompletedProcess[str]:
    return await run(
        [claude, "-p", prompt, "--allowedTools", "Bash"],
        project.repo,
        project.claude_env(base, key, fake),
        CLAUDE_TIMEOUT_S,
    )


def hook_context(body: dict[str, Any], event: str) -> str:
    """What the `event` hook added to the request, as Claude Code words it ("<event> hook additional
    context: …"), up to the next hook's addition; empty when it added nothing."""
    marker = f"{event} hook additional context:"
    found: list[str] = []
    for text in texts(body.get("messages", [])):
        start = text.find(marker)
        while start >= 0:
            rest = text[start + len(marker) :]
            found.append(rest.split(" hook additional context:")[0])
            start = text.find(marker, start + len(marker))
    return "\n".join(found)


def _asked(fake: FakeAnthropic, prompt: str, since: int = 0) -> list[dict[str, Any]]:
    """The requests to the model (after the first `since`) that carry `prompt`."""
    return [body for body in fake.messages()[since:] if prompt in json.dumps(body.get("messages", []))]


async def test_session_start_context_and_a_captured_exchange_reach_the_next_session(
    tmp_path: Path, project: Project, fake_model: FakeAnthropic
) -> None:
    claude = await asyncio.to_thread(claude_binary)
    async with served_api(project.server_env) as api:
        key = await create_key(project, "cc")
        await store_pinned(api.base, key, project.namespace, PINNED_FACT)
        await _install_hooks(project, api.base, key)

        first = await _claude(claude, project, api.base, key, fake_model, FIRST_PROMPT)
        asked = _asked(fake_model, FIRST_PROMPT)
        assert asked, f"the first session never asked the model\n{shown(first, project)}"
        assert PINNED_FACT in hook_context(asked[0], "SessionStart"), (
            f"SessionStart did not bring the pinned memory to the first request\n{shown(first, project)}"
        )
        assert FIRST_REPLY in first.stdout, shown(first, project)
        assert first.returncode == 0, shown(first, project)

        episode = await wait_for_episode(api.base, key, project, FIRST_REPLY, CAPTURE_WAIT_S)
        assert FIRST_PROMPT in episode["content"]
        assert episode["kind"] == "episode"
        assert episode["expires_at"] is not None

        before = len(fake_model.messages())
        second = await _claude(claude, project, api.base, key, fake_model, SECOND_PROMPT)
        asked_then = _asked(fake_model, SECOND_PROMPT, before)
        assert asked_then, f"the second session never asked the model\n{shown(second, project)}"
        # the prompt's recall brings it (a new session starts with no other sessions' episodes)
        started = hook_context(asked_then[0], "SessionStart")
        recalled = hook_context(asked_then[0], "UserPromptSubmit")
        assert ("7341" in started, "7341" in recalled) == (False, True), (
            f"the captured exchange did not reach the next session once: {started[:1500]!r}, "
            f"{recalled[:1500]!r}\n" + shown(second, project)
        )
        assert second.returncode == 0, shown(second, project)


async def test_with_the_server_stopped_claude_prints_nothing_extra_and_the_spool_is_stored_once_later(
    tmp_path: Path, project: Project, fake_model: FakeAnthropic
) -> None:
    claude = await asyncio.to_thread(claude_binary)
    stopped = await run_with_the_server_stopped(
        project,
        "cc",
        lambda base, key: _claude(claude, project, base, key, fake_model, OFFLINE_PROMPT),
        lambda base, key: _install_hooks(project, base, key),
    )
    assert OFFLINE_REPLY in project.spool_text(), (
        f"the exchange is not in the spool\nhook log:\n{project.log()}"
    )

    # back on the same address, so the installed hooks (and the spooled batches) find it
    await stored_once_after_restart(project, stopped, OFFLINE_PROMPT, OFFLINE_REPLY, "claude-code")
