"""Memoria's hooks as Claude Code runs them: installed by the project's own installer into a scratch
HOME, read back from the settings file it wrote, and run from there.

`install_hooks` runs `memoria hook install --scope user --url …` with HOME pointing at the scratch
home, so the command lines are exactly what a person's `~/.claude/settings.json` would hold
(with no `--namespace`: each hook works out its namespace from the event's `cwd`, so each project
checkout gets its own). `HookRunner.run` does what Claude Code does for an event: every command
hook of the event's groups (a group's `matcher` applied to SessionStart's `source` and PreCompact's
`trigger`) through `sh -c`, in the project directory, with the event JSON on stdin, within the
hook's `timeout`; the context is the `additionalContext` of the JSON it prints (plain text stdout
counts as context too, as Claude Code takes it for SessionStart and UserPromptSubmit).

The capture hook hands its work to a detached process and exits. So that the next session sees
what this one said, as it would a minute later in real use, `wait_for_capture` waits until that
worker recorded its run in the client's `status.json` and the spool is empty (the server took
every exchange).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoria_bench.serve import REPO_ROOT, memoria_command
from memoria_hook_client.environment import ENV_API_KEY, ENV_HOOK_BUDGET, ENV_HOOK_LOG
from memoria_hook_client.state import read_status, spool_summary, state_dir

#: Variables of the bench's own shell that would steer the hooks away from the scratch home.
DROPPED = ("XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "PYTHONDONTWRITEBYTECODE")
CAPTURE_WAIT_S = 60.0
POLL_S = 0.02
#: The fields of the settings file's hooks Claude Code matches per event.
MATCHED_FIELD = {"SessionStart": "source", "PreCompact": "trigger"}


@dataclass(frozen=True, slots=True)
class HookAnswer:
    """What one event's hooks gave back: the context injected (empty: none) and the outcome the
    hook recorded for `memoria status` (`injected`, `no-results`, `skipped`, `timeout`, …)."""

    context: str
    outcome: str | None


def hook_env(home: Path, key: str, budget_s: float | None) -> dict[str, str]:
    """The environment Claude Code gives its hooks here: this shell's, minus every Memoria client
    setting and XDG directory (they would point at the person's own state), with the scratch HOME
    and the key."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("MEMORIA_CLIENT__") and name not in DROPPED
    }
    env |= {"HOME": str(home), ENV_API_KEY: key, ENV_HOOK_LOG: str(home / "hook.log")}
    if budget_s is not None:
        env[ENV_HOOK_BUDGET] = str(budget_s)
    return env


def install_hooks(home: Path, base: str, key: str) -> Path:
    """`memoria hook install --scope user` into `home`; the settings file it wrote."""
    env = {**hook_env(home, key, None), "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        [*memoria_command("hook", "install", "--scope", "user", "--url", base)],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    settings = home / ".claude" / "settings.json"
    if done.returncode != 0 or not settings.is_file():
        raise RuntimeError(f"memoria hook install failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return settings


def additional_context(printed: str) -> str:
    """The context a hook's stdout adds: `hookSpecificOutput.additionalContext` of a JSON answer,
    or the text itself when it is not JSON (Claude Code injects plain stdout as context)."""
    text = printed.strip()
    if not text:
        return ""
    try:
        answer = json.loads(text)
    except ValueError:
        return text
    specific = answer.get("hookSpecificOutput") if isinstance(answer, dict) else None
    context = specific.get("additionalContext") if isinstance(specific, dict) else None
    return context if isinstance(context, str) else ""


def _matches(matcher: Any, value: str | None) -> bool:
    if not matcher or matcher == "*" or value is None:
        return True
    return re.fullmatch(str(matcher), value) is not None


class HookRunner:
    """Runs the settings file's hooks for events, with one environment (one person's machine)."""

    def __init__(self, settings_file: Path, env: Mapping[str, str]) -> None:
        settings = json.loads(settings_file.read_text(encoding="utf-8"))
        self.hooks: dict[str, list[dict[str, Any]]] = settings.get("hooks", {})
        self.env = dict(env)
        # The client resolves its state folder from `~` of the hook's HOME, which this process does
        # not share: read it through the same rule, with the home made explicit.
        self.reading_env = {**self.env, "XDG_STATE_HOME": os.path.join(self.env["HOME"], ".local", "state")}
        self.state = Path(state_dir(self.reading_env))

    def commands(self, event: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The command hooks Claude Code runs for `event`, in the file's order."""
        name = str(event["hook_event_name"])
        field = MATCHED_FIELD.get(name)
        value = str(event[field]) if field and field in event else None
        return [
            hook
            for group in self.hooks.get(name, [])
            if _matches(group.get("matcher"), value)
            for hook in group.get("hooks", [])
            if hook.get("type") == "command"
        ]

    def run(self, event: Mapping[str, Any], cwd: Path) -> HookAnswer:
        """Every hook of the event, one after the other; their contexts joined."""
        contexts: list[str] = []
        for hook in self.commands(event):
            done = subprocess.run(
                ["/bin/sh", "-c", str(hook["command"])],
                input=json.dumps(event).encode(),
                capture_output=True,
                cwd=cwd,
                env={**self.env, "CLAUDE_PROJECT_DIR": str(cwd)},
                timeout=float(hook.get("timeout", 60)) + 5,
                check=False,
            )
            if done.returncode != 0:
                raise RuntimeError(f"{hook['command']} exited {done.returncode}: {done.stderr[-500:]!r}")
            context = additional_context(done.stdout.decode(errors="replace"))
            if context:
                contexts.append(context)
        return HookAnswer("\n".join(contexts), self.outcome(str(event["hook_event_name"])))

    def outcome(self, event: str) -> str | None:
        """What the prompt or session-start hook last recorded (None for other events)."""
        what = {"UserPromptSubmit": "recall", "SessionStart": "session-start"}.get(event)
        record = read_status(self.reading_env).get(what) if what else None
        return str(record.get("outcome")) if isinstance(record, dict) else None

    def status_stamp(self) -> int:
        """When `status.json` last changed (0: never written): a worker's record changes it."""
        try:
            return (self.state / "status.json").stat().st_mtime_ns
        except OSError:
            return 0

    def wait_for_capture(self, before: int) -> bool:
        """Wait until the detached capture worker started after `before` (a `status_stamp`) recorded
        its run and the spool is empty; False when that took longer than CAPTURE_WAIT_S."""
        deadline = time.monotonic() + CAPTURE_WAIT_S
        while time.monotonic() < deadline:
            if self.status_stamp() != before and spool_summary(self.reading_env)["batches"] == 0:
                return True
            time.sleep(POLL_S)
        return False
