"""Running the real Claude Code (from npm) headless: where it is and the environment it runs in.

Claude Code is found at `$CLAUDE_CODE_BIN` (`.ci/claude-code-mcp.sh` sets it), else installed by
`.ci/claude-code-mcp.sh --install-only` (npm, into a local folder). Its model is the fake Anthropic
Messages API on 127.0.0.1 (`ANTHROPIC_BASE_URL`, `memoria_bench.clis.anthropic_api`) with a dummy
`ANTHROPIC_API_KEY`; telemetry, auto-updates, error reports and other non-essential traffic are
off, and it runs with its own HOME.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from memoria_bench.clis import installed_binary
from memoria_bench.serve import REPO_ROOT

INSTALL_SCRIPT = REPO_ROOT / ".ci" / "claude-code-mcp.sh"
CLAUDE_TIMEOUT_S = 120


def claude_binary() -> str:
    return installed_binary("CLAUDE_CODE_BIN", INSTALL_SCRIPT, "Claude Code")


def claude_env(base: Mapping[str, str], home: Path, model_url: str) -> dict[str, str]:
    """`base` with nothing of Anthropic's or Claude Code's own, plus what points Claude Code at the
    fake API and keeps it quiet."""
    keep = {k: v for k, v in base.items() if not k.startswith(("ANTHROPIC_", "CLAUDE", "XDG_"))}
    return keep | {
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": model_url,
        "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


def claude_argv(claude: str, prompt: str) -> list[str]:
    """One headless session (`claude -p`) on `prompt`."""
    return [claude, "-p", prompt]
