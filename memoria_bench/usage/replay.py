"""One scenario replayed through the installed hooks, in the order Claude Code fires them.

Per session: SessionStart (`startup`, or `resume` for a session that `continues` an earlier one:
same session id, same transcript); per turn: (a `/compact` first when asked: PreCompact, then
SessionStart `compact`), UserPromptSubmit with the prompt, the rest of the turn written to the
transcript, then Stop, which Claude Code fires only when the model finished its reply (not after an
API error, a refused tool or an interruption: those turns are captured by the next Stop or by
SessionEnd); SessionEnd when the session is over. After each capture event the replay waits for the
capture worker and for the server's background work (embeddings), so the next prompt meets the
memory as it would a moment later in real use.

What each SessionStart and UserPromptSubmit injected is kept as a `HookCall`, with what the scenario
had said up to then: the metrics are computed from these afterwards (`memoria_bench.usage.metrics`).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoria_bench.usage.hooks import HookRunner
from memoria_bench.usage.scenario import FactVersion, Scenario, Session, Turn
from memoria_bench.usage.transcript import TranscriptWriter

COMPACT_SUMMARY = "This session is being continued from a previous conversation that was compacted."


@dataclass(frozen=True, slots=True)
class HookCall:
    """One SessionStart or UserPromptSubmit and what it injected. `said` is the newest version of
    each fact said before this call (what counts as current, and so what is stale)."""

    session: str
    session_id: str
    event: str
    context: str
    outcome: str | None
    said: dict[str, int]
    source: str | None = None
    prompt: str | None = None
    asks: FactVersion | None = None
    unrelated: bool = False


@dataclass(slots=True)
class Replay:
    """The calls in order, and how often a capture worker did not finish in time."""

    calls: list[HookCall] = field(default_factory=list)
    capture_waits_timed_out: int = 0
    hook_runs: int = 0


def session_uuid(scenario: str, session: str) -> str:
    """A stable session id per scenario session (Claude Code's are UUIDs)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"memoria-bench-usage:{scenario}:{session}"))


def project_dir(root: Path, project: str) -> Path:
    """The project's checkout: a directory with `.git`, so the hooks name it `repo:<project>`."""
    path = root / "projects" / project
    (path / ".git").mkdir(parents=True, exist_ok=True)
    return path


def transcript_path(home: Path, cwd: Path, session_id: str) -> Path:
    """Where Claude Code keeps the session's transcript: `~/.claude/projects/<cwd with - for />/`."""
    folder = str(cwd).replace("/", "-").replace(".", "-")
    return home / ".claude" / "projects" / folder / f"{session_id}.jsonl"


Settle = Callable[[], Awaitable[None]]
"""Waits until the server has no background work due (the replay's pause after a capture)."""


class Replayer:
    def __init__(
        self, scenario: Scenario, runner: HookRunner, home: Path, root: Path, settle: Settle
    ) -> None:
        self.scenario = scenario
        self.runner = runner
        self.home = home
        self.root = root
        self.settle = settle
        self.replay = Replay()
        self.said: dict[str, int] = {}
        self.writers: dict[str, TranscriptWriter] = {}

    async def _fire(self, event: dict[str, Any], cwd: Path) -> tuple[str, str | None]:
        self.replay.hook_runs += 1
        answer = await asyncio.to_thread(self.runner.run, event, cwd)
        return answer.context, answer.outcome

    async def _capture(self, event: dict[str, Any], cwd: Path) -> None:
        before = self.runner.status_stamp()
        await self._fire(event, cwd)
        if not self.runner.commands(event):
            return
        if not await asyncio.to_thread(self.runner.wait_for_capture, before):
            self.replay.capture_waits_timed_out += 1
        await self.settle()

    def _base(self, writer: TranscriptWriter, name: str) -> dict[str, Any]:
        return {
            "session_id": writer.session_id,
            "transcript_path": str(writer.path),
            "cwd": writer.cwd,
            "hook_event_name": name,
        }

    async def _start(self, session: Session, writer: TranscriptWriter, source: str, cwd: Path) -> None:
        event = {**self._base(writer, "SessionStart"), "source": source}
        context, outcome = await self._fire(event, cwd)
        writer.injected(context, "SessionStart")
        self.replay.calls.append(
            HookCall(
                session.id,
                writer.session_id,
                "SessionStart",
                context,
                outcome,
                dict(self.said),
                source=source,
            )
        )

    async def _turn(self, session: Session, writer: TranscriptWriter, turn: Turn, cwd: Path) -> None:
        if turn.compact_before:
            await self._capture(
                {**self._base(writer, "PreCompact"), "trigger": "manual", "custom_instructions": ""}, cwd
            )
            writer.compacted(COMPACT_SUMMARY)
            await self._start(session, writer, "compact", cwd)
        prompt_id = writer.prompt(turn.user)
        event = {
            **self._base(writer, "UserPromptSubmit"),
            "prompt_id": prompt_id,
            "permission_mode": "default",
            "prompt": turn.user,
        }
        context, outcome = await self._fire(event, cwd)
        writer.injected(context, "UserPromptSubmit")
        self.replay.calls.append(
            HookCall(
                session.id,
                writer.session_id,
                "UserPromptSubmit",
                context,
                outcome,
                dict(self.said),
                prompt=turn.user,
                asks=turn.asks,
                unrelated=turn.unrelated,
            )
        )
        writer.rest_of_turn(prompt_id, turn)
        for version in turn.says:
            self.said[version.fact] = max(self.said.get(version.fact, 0), version.version)
        if turn.api_error is None and turn.refused is None and not turn.interrupted:
            stop = {
                **self._base(writer, "Stop"),
                "permission_mode": "default",
                "stop_hook_active": False,
                "last_assistant_message": turn.reply,
            }
            await self._capture(stop, cwd)

    async def session(self, session: Session) -> None:
        cwd = project_dir(self.root, session.project)
        if session.continues is not None:
            writer = self.writers[session.continues]
            source = "resume"
        else:
            sid = session_uuid(self.scenario.name, session.id)
            writer = TranscriptWriter(transcript_path(self.home, cwd, sid), sid, str(cwd))
            source = "startup"
        self.writers[session.id] = writer
        await self._start(session, writer, source, cwd)
        for turn in session.turns:
            await self._turn(session, writer, turn, cwd)
        await self._capture({**self._base(writer, "SessionEnd"), "reason": "prompt_input_exit"}, cwd)


async def replay_scenario(
    scenario: Scenario, runner: HookRunner, home: Path, root: Path, settle: Settle
) -> Replay:
    """Every session of `scenario` in order; the hook calls that could inject context."""
    replayer = Replayer(scenario, runner, home, root, settle)
    for session in scenario.sessions:
        await replayer.session(session)
    return replayer.replay
