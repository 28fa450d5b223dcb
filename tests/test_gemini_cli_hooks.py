"""The real Gemini CLI (from npm) with the hooks `memoria hook install --agent gemini` writes, against a
real `memoria serve` (embedded PostgreSQL), its model played by the fake Gemini API on 127.0.0.1.

1. SessionStart: a pinned memory of the project's namespace is in the first request the model gets.
2. Capture and recall: a session's exchange (with a `read_file` call on the way) is captured from
   Gemini CLI's session file (AfterAgent / SessionEnd -> spool -> `/v1/capture/gemini`) as an
   episode whose source is `gemini`, and the NEXT session's prompt gets it through BeforeAgent.
3. Server stopped: `gemini -p` prints what it prints with no hooks installed, the exchange waits in
   the spool, and once the server is back `memoria capture flush` stores it once.

How Gemini CLI 0.61.0 hands hook context to the model in `gemini -p` (read off the requests it
sent the fake): SessionStart's as `<hook_context>…</hook_context>` in front of the prompt's text,
BeforeAgent's as a text part of its own after it, both in the prompt's user turn. The hooks are
installed in user scope (`~/.gemini/settings.json` of the test's HOME, which already holds the
person's own settings); `MEMORIA_CLIENT__CAPTURE_FLUSH=inline` makes capture deterministic. Every
wait is bounded.
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

import pytest

from memoria_bench.clis.gemini import (
    GEMINI_TIMEOUT_S,
    USER_SETTINGS,
    gemini_argv,
    gemini_binary,
    gemini_env,
    without_noise,
    write_user_settings,
)
from memoria_bench.clis.gemini_api import FakeGemini, FunctionCall, Reply, Text
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
HOOK_EVENTS = {"SessionStart", "BeforeAgent", "AfterAgent", "PreCompress", "SessionEnd"}
_HOOK_CONTEXT = re.compile(r"<hook_context>(.*?)</hook_context>", re.DOTALL)


def script(body: dict[str, Any]) -> Reply:
    """For FIRST_PROMPT one `read_file` of gateway.toml, then FIRST_REPLY; text otherwise."""
    asked = json.dumps(body.get("contents", []))
    if FIRST_PROMPT in asked:
        if "functionResponse" not in asked:
            return FunctionCall("read_file", {"file_path": "gateway.toml"})
        return Text(FIRST_REPLY)
    if OFFLINE_PROMPT in asked:
        return Text(OFFLINE_REPLY)
    return Text("Done.")


@pytest.fixture
def fake_model() -> Iterator[FakeGemini]:
    fake = FakeGemini(script).start()
    yield fake
    fake.stop()


@dataclass
class Project(AgentProject):
    """The test's repository and a HOME with the person's Gemini CLI settings."""

    @property
    def settings(self) -> Path:
        return self.home / ".gemini" / "settings.json"

    def gemini_env(self, base: str, key: str, fake: FakeGemini) -> dict[str, str]:
        env = self.client_env(base, key) | {"MEMORIA_CLIENT__CAPTURE_FLUSH": "inline"}
        return gemini_env(env, self.home, fake.url)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    home = tmp_path / "home"
    write_user_settings(home)
    return Project(git_repo(tmp_path / "quokka-9"), home, tmp_path / "hook.log", tmp_path / "pgdata")


async def _install_hooks(project: Project, base: str, key: str) -> None:
    """`memoria hook install --agent gemini` into the person's own ~/.gemini/settings.json."""
    await memoria(
        project, base, key, "hook", "install", "--agent", "gemini", "--namespace", project.namespace
    )
    settings: dict[str, Any] = json.loads(project.settings.read_text())
    assert set(settings.get("hooks", {})) >= HOOK_EVENTS, json.dumps(settings, indent=1)
    assert {k: v for k, v in settings.items() if k != "hooks"} == USER_SETTINGS


async def _gemini(
    gemini: str, project: Project, base: str, key: str, fake: FakeGemini, prompt: str
) -> subprocess.CompletedProcess[str]:
    return await run(
        gemini_argv(gemini, prompt), project.repo, project.gemini_env(base, key, fake), GEMINI_TIMEOUT_S
    )


def hook_contexts(body: dict[str, Any], prompt: str) -> tuple[str, str]:
    """(SessionStart's context, BeforeAgent's) in the user turn that carries `prompt`: the first is
    the `<hook_context>` in front of the prompt's own text part, the second a part of its own."""
    start: list[str] = []
    before_agent: list[str] = []
    for content in body.get("contents", []):
        parts = [part.get("text", "") for part in content.get("parts", []) if isinstance(part, dict)]
        if content.get("role") != "user" or not any(prompt in text for text in parts):
            continue
        for text in parts:
            found = _HOOK_CONTEXT.findall(text)
            (start if prompt in text else before_agent).extend(found)
    return "\n".join(start), "\n".join(before_agent)


def _asked(fake: FakeGemini, prompt: str, since: int = 0) -> list[dict[str, Any]]:
    """The model's turns (after the first `since`) whose request carries `prompt`."""
    return [body for body in fake.generations()[since:] if prompt in json.dumps(body.get("contents", []))]


async def test_session_start_context_and_a_captured_exchange_reach_the_next_gemini_session(
    project: Project, fake_model: FakeGemini
) -> None:
    gemini = await asyncio.to_thread(gemini_binary)
    async with served_api(project.server_env) as api:
        key = await create_key(project, "gem")
        await store_pinned(api.base, key, project.namespace, PINNED_FACT)
        await _install_hooks(project, api.base, key)

        first = await _gemini(gemini, project, api.base, key, fake_model, FIRST_PROMPT)
        asked = _asked(fake_model, FIRST_PROMPT)
        assert asked, f"the first session never asked the model\n{shown(first, project)}"
        started, _ = hook_contexts(asked[0], FIRST_PROMPT)
        assert PINNED_FACT in started, (
            f"SessionStart did not bring the pinned memory to the first request\n{shown(first, project)}"
        )
        assert (first.returncode, first.stdout.strip()) == (0, FIRST_REPLY), shown(first, project)

        episode = await wait_for_episode(api.base, key, project, FIRST_REPLY, CAPTURE_WAIT_S)
        assert FIRST_PROMPT in episode["content"]
        assert PINNED_FACT not in episode["content"], "the injected context was captured as the prompt"
        assert (episode["kind"], episode["source"]) == ("episode", "gemini")

        before = len(fake_model.generations())
        second = await _gemini(gemini, project, api.base, key, fake_model, SECOND_PROMPT)
        asked_then = _asked(fake_model, SECOND_PROMPT, before)
        assert asked_then, f"the second session never asked the model\n{shown(second, project)}"
        # the prompt's recall brings it (a new session starts with no other sessions' episodes)
        started, recalled = hook_contexts(asked_then[0], SECOND_PROMPT)
        assert ("7341" in started, "7341" in recalled) == (False, True), (
            f"the captured exchange did not reach the next session once: {started[:1500]!r}, "
            f"{recalled[:1500]!r}\n" + shown(second, project)
        )
        assert second.returncode == 0, shown(second, project)


async def test_with_the_server_stopped_gemini_prints_nothing_extra_and_the_spool_is_stored_once_later(
    project: Project, fake_model: FakeGemini
) -> None:
    gemini = await asyncio.to_thread(gemini_binary)
    stopped = await run_with_the_server_stopped(
        project,
        "gem",
        lambda base, key: _gemini(gemini, project, base, key, fake_model, OFFLINE_PROMPT),
        lambda base, key: _install_hooks(project, base, key),
        lambda done: (done.returncode, done.stdout, without_noise(done.stderr)),
    )
    assert OFFLINE_REPLY in project.spool_text(), (
        f"the exchange is not in the spool\nhook log:\n{project.log()}"
    )

    # back on the same address, so the installed hooks (and the spooled batches) find it
    await stored_once_after_restart(project, stopped, OFFLINE_PROMPT, OFFLINE_REPLY, "gemini")
