"""`.ci/agent-cli.sh AGENT --latest`: one report line per agent, exit 0 whatever npm's latest release
does — a client change is a red line in CI, never a silent skip. npm is a stand-in on PATH, so no
package is fetched here."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SCRIPT = REPO_ROOT / ".ci" / "agent-cli.sh"
AGENTS = {
    "claude-code": "Claude Code",
    "codex": "Codex CLI",
    "gemini": "Gemini CLI",
    "qwen": "Qwen Code",
    "opencode": "OpenCode",
    "copilot": "GitHub Copilot CLI",
}


def pinned(agent: str) -> str:
    """The version the script pins for `agent`."""
    text = SCRIPT.read_text()
    block = text[text.index(f"\n  {agent})") :]
    found = re.search(r"pinned=(\S+)", block)
    assert found is not None
    return found.group(1)


def latest(tmp_path: Path, agent: str, npm_view: str | None) -> subprocess.CompletedProcess[str]:
    """The script's `--latest` with an npm whose `view` prints `npm_view` (fails when None) and whose
    `install` always fails."""
    stub = tmp_path / "bin"
    stub.mkdir(exist_ok=True)
    view = f"echo {npm_view}; exit 0" if npm_view is not None else "exit 1"
    npm = stub / "npm"
    npm.write_text(f'#!/bin/sh\nif [ "$1" = view ]; then {view}; fi\necho "no network here" >&2\nexit 1\n')
    npm.chmod(0o755)
    env = {**os.environ, "PATH": f"{stub}:{os.environ['PATH']}", "HOME": str(tmp_path / "home")}
    return subprocess.run(
        ["bash", str(SCRIPT), agent, "--latest"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("agent", list(AGENTS))
def test_the_pinned_release_as_npms_latest_is_said_and_not_run_again(tmp_path: Path, agent: str) -> None:
    run = latest(tmp_path, agent, pinned(agent))
    assert run.returncode == 0, run.stderr
    assert run.stdout == (
        f"{AGENTS[agent]} latest: {pinned(agent)} is the pinned version, tested by make test; no second run\n"
    )


def test_a_newer_release_that_does_not_install_is_a_failed_line_and_exit_0(tmp_path: Path) -> None:
    run = latest(tmp_path, "codex", "999.0.0")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("Codex CLI latest: FAILED (allowed): installing 999.0.0 from npm failed")
    assert run.stdout.count("\n") == 1


def test_npm_not_answering_is_a_not_tested_line_naming_the_pinned_release(tmp_path: Path) -> None:
    run = latest(tmp_path, "opencode", None)
    assert run.returncode == 0, run.stderr
    assert run.stdout == (
        f"OpenCode latest: NOT TESTED: npm did not answer which version is the latest "
        f"(pinned {pinned('opencode')} tested)\n"
    )


def test_an_unknown_agent_is_a_usage_error(tmp_path: Path) -> None:
    run = subprocess.run(
        ["bash", str(SCRIPT), "cursor"], capture_output=True, text=True, timeout=60, check=False
    )
    assert run.returncode == 2
    assert "usage:" in run.stderr
