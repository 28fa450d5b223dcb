"""One memory for two agents: the real Claude Code and the real Codex CLI in the same repository, both
installed by one `memoria hook install --agent all` (both commands on PATH), against one
`memoria serve`, each with its fake model API on 127.0.0.1.

1. Claude Code → Codex: an exchange captured in a Claude Code session (source `claude-code`) is
   recalled by the prompt hook of the next Codex session.
2. Codex → Claude Code: that Codex session's own exchange, captured from Codex's session file
   (source `codex`), is recalled by the prompt hook of the next Claude Code session.

Both agents find the same namespace on their own (the repository's), with no `--namespace` anywhere.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memoria_bench.clis.anthropic_api import FakeAnthropic
from memoria_bench.clis.anthropic_api import Reply as ClaudeReply
from memoria_bench.clis.anthropic_api import Text as ClaudeText
from memoria_bench.clis.claude import CLAUDE_TIMEOUT_S, claude_binary
from memoria_bench.clis.codex import CODEX_TIMEOUT_S, codex_binary
from memoria_bench.clis.responses_api import FakeResponses
from memoria_bench.clis.responses_api import Reply as CodexReply
from memoria_bench.clis.responses_api import Text as CodexText
from memoria_bench.serve import served_api
from tests.real_cli import create_key, episodes, run, shown
from tests.test_claude_code_hooks import hook_context
from tests.test_claude_code_mcp import MEMORIA
from tests.test_codex_cli import PROMPT_HEADER, Project, memoria_context, project

__all__ = ["project"]  # the fixture of tests/test_codex_cli.py, used here

pytestmark = pytest.mark.e2e

CLAUDE_PROMPT = "Which port does the walrus gateway of quokka-9 listen on? Check gateway.toml."
CLAUDE_REPLY = "The walrus gateway of quokka-9 listens on port 7341, behind the amber proxy."
CODEX_PROMPT = "Which port does the walrus gateway listen on, and when is the narwhal cache flushed?"
CODEX_REPLY = "Port 7341; the narwhal cache of quokka-9 is flushed every Tuesday at noon (cache.toml)."
LAST_PROMPT = "When is the narwhal cache of quokka-9 flushed?"


def claude_script(body: dict[str, Any]) -> ClaudeReply:
    asked = json.dumps(body.get("messages", []))
    return ClaudeText(CLAUDE_REPLY if CLAUDE_PROMPT in asked else "Done.")


def codex_script(body: dict[str, Any]) -> CodexReply:
    asked = json.dumps(body.get("input", []))
    return CodexText(CODEX_REPLY if CODEX_PROMPT in asked else "Done.")


async def _closed_stdin(
    argv: list[str], cwd: Path, env: dict[str, str], limit_s: float
) -> subprocess.CompletedProcess[str]:
    """`run` with stdin on /dev/null, so neither agent reads or waits on the test's own stdin."""
    return await run(argv, cwd, env, limit_s, stdin=subprocess.DEVNULL)


async def test_what_one_agent_captured_is_recalled_by_the_other_both_ways(project: Project) -> None:
    claude, codex = await asyncio.gather(asyncio.to_thread(claude_binary), asyncio.to_thread(codex_binary))
    claude_model = FakeAnthropic(claude_script).start()
    codex_model = FakeResponses(codex_script).start()
    try:
        project.write_provider(codex_model)
        async with served_api({"MEMORIA_DATABASE__DATA_DIR": str(project.data_dir)}) as api:
            key = await create_key(project, "cx")
            env = project.codex_env(api.base, key)
            env["PATH"] = os.pathsep.join([str(Path(claude).parent), str(Path(codex).parent), env["PATH"]])
            claude_env = env | {
                "ANTHROPIC_BASE_URL": claude_model.url,
                "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests",
                "DISABLE_TELEMETRY": "1",
                "DISABLE_AUTOUPDATER": "1",
                "DISABLE_ERROR_REPORTING": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            }
            installed = await _closed_stdin(
                [MEMORIA, "hook", "install", "--agent", "all"], project.repo, env, 120
            )
            assert installed.returncode == 0, installed.stderr
            assert "Codex CLI: installed" in installed.stderr, installed.stderr
            assert (project.home / ".claude" / "settings.json").is_file(), installed.stderr

            first = await _closed_stdin(
                [claude, "-p", CLAUDE_PROMPT], project.repo, claude_env, CLAUDE_TIMEOUT_S
            )
            assert CLAUDE_REPLY in first.stdout, shown(first, project)
            sources = {e["source"] for e in await episodes(api.base, key, project.namespace)}
            assert sources == {"claude-code"}, shown(first, project)

            second = await _closed_stdin([codex, "exec", CODEX_PROMPT], project.repo, env, CODEX_TIMEOUT_S)
            asked = [b for b in codex_model.responses() if CODEX_PROMPT in json.dumps(b.get("input", []))]
            assert asked, shown(second, project)
            assert CLAUDE_REPLY in memoria_context(asked[0], PROMPT_HEADER), (
                "Claude Code's exchange did not reach Codex's prompt\n" + shown(second, project)
            )
            captured = [
                e for e in await episodes(api.base, key, project.namespace) if CODEX_REPLY in e["content"]
            ]
            assert [e["source"] for e in captured] == ["codex"], shown(second, project)

            third = await _closed_stdin(
                [claude, "-p", LAST_PROMPT], project.repo, claude_env, CLAUDE_TIMEOUT_S
            )
            asked_claude = [
                b for b in claude_model.messages() if LAST_PROMPT in json.dumps(b.get("messages", []))
            ]
            assert asked_claude, shown(third, project)
            assert "every Tuesday at noon" in hook_context(asked_claude[0], "UserPromptSubmit"), (
                "Codex's exchange did not reach Claude Code's prompt\n" + shown(third, project)
            )
    finally:
        claude_model.stop()
        codex_model.stop()
