"""Running the real Qwen Code (from npm) headless: where it is, the HOME and environment it runs in.

Qwen Code is found at `$QWEN_CODE_BIN` (`.ci/qwen-code.sh` sets it), else installed by
`.ci/qwen-code.sh --install-only` (npm, into a local folder). It is pointed at a fake OpenAI Chat
Completions API on 127.0.0.1 (`OPENAI_BASE_URL`, `memoria_bench.clis.openai_chat_api`) with a dummy
`OPENAI_API_KEY` and `OPENAI_MODEL`, and runs in its own HOME, whose
`~/.qwen/settings.json` picks OpenAI auth and turns usage statistics, telemetry and update checks
off, and the bundled ripgrep off (npm installs it without its execute bit, and Qwen Code says so on
stderr at every run). Read off 0.24.4: with these, a `qwen -p` run opens one TCP connection, to the
fake (strace of its `connect` calls).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memoria_bench.clis import installed_binary
from memoria_bench.serve import REPO_ROOT

INSTALL_SCRIPT = REPO_ROOT / ".ci" / "qwen-code.sh"
QWEN_TIMEOUT_S = 90
MODEL = "qwen-fake"

#: What a person's own `~/.qwen/settings.json` holds in these tests (an install must keep it).
USER_SETTINGS: dict[str, Any] = {
    # 0.24.4's settings format: it adds this to a file without it at its first run
    "$version": 4,
    "security": {"auth": {"selectedType": "openai"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "disableAutoUpdate": True},
    "tools": {"useRipgrep": False},
}


def qwen_binary() -> str:
    return installed_binary("QWEN_CODE_BIN", INSTALL_SCRIPT, "Qwen Code")


def write_user_settings(home: Path) -> Path:
    path = home / ".qwen" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(USER_SETTINGS, indent=2) + "\n")
    return path


def qwen_env(base: dict[str, str], home: Path, model_base_url: str) -> dict[str, str]:
    """`base` (the test's environment) with nothing of Qwen's, OpenAI's, Gemini's or Dashscope's own,
    plus what points Qwen Code at the fake API."""
    keep = {
        k: v
        for k, v in base.items()
        if not k.startswith(("QWEN_", "OPENAI_", "GEMINI_", "GOOGLE_", "DASHSCOPE_", "XDG_"))
    }
    return keep | {
        "HOME": str(home),
        "OPENAI_API_KEY": "fake-openai-key-for-tests",
        "OPENAI_BASE_URL": model_base_url,
        "OPENAI_MODEL": MODEL,
        "NO_COLOR": "1",
    }


def qwen_argv(qwen: str, prompt: str) -> list[str]:
    return [qwen, "-p", prompt]
