"""Running the real Gemini CLI (from npm) headless: where it is, the HOME and environment it runs in.

Gemini CLI is found at `$GEMINI_CLI_BIN` (`.ci/gemini-cli.sh` sets it), else installed by
`.ci/gemini-cli.sh --install-only` (npm, into a local folder). It is pointed at a fake Gemini API
on 127.0.0.1 (`GOOGLE_GEMINI_BASE_URL`, `memoria_bench.clis.gemini_api`) with a dummy `GEMINI_API_KEY`,
and runs in its own HOME, whose `~/.gemini/settings.json` picks API-key auth (with the base
URL set it would otherwise pick "gateway" auth, which `gemini -p` refuses) and turns usage
statistics, telemetry and update checks off. Read off 0.61.0: with these, a `gemini -p` run opens
one connection, to the fake (strace of its `connect` calls).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memoria_bench.clis import installed_binary
from memoria_bench.serve import REPO_ROOT

INSTALL_SCRIPT = REPO_ROOT / ".ci" / "gemini-cli.sh"
GEMINI_TIMEOUT_S = 90
#: Named on the command line: without a model Gemini CLI first asks a routing classifier (a
#: `generateContent` call of its own) which model to use.
MODEL = "gemini-2.5-flash"

#: What a person's own `~/.gemini/settings.json` holds in these tests (an install must keep it).
USER_SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    # 0.61.0's names: it rewrites the file when it finds the older disableAutoUpdate/disableUpdateNag
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
}

#: Lines Gemini CLI 0.61.0 writes to stderr on its own, hooks or not: the startup profiler's notes
#: race the exit (present in some runs and not others, with no hooks installed too).
NOISE_PREFIXES = ("[STARTUP] ",)


def gemini_binary() -> str:
    return installed_binary("GEMINI_CLI_BIN", INSTALL_SCRIPT, "Gemini CLI")


def write_user_settings(home: Path) -> Path:
    path = home / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(USER_SETTINGS, indent=2) + "\n")
    return path


def gemini_env(base: dict[str, str], home: Path, model_url: str) -> dict[str, str]:
    """`base` (the test's environment) with nothing of Gemini's, Google's or GitHub Actions' own,
    plus what points Gemini CLI at the fake API. GITHUB_SHA is dropped because with it Gemini CLI
    hands hooks a strictly sanitised environment (PATH, HOME and little else)."""
    keep = {
        k: v
        for k, v in base.items()
        if not k.startswith(("GEMINI_", "GOOGLE_", "CLOUD_SHELL", "XDG_"))
        and k not in ("GITHUB_SHA", "SURFACE")
    }
    return keep | {
        "HOME": str(home),
        "GEMINI_API_KEY": "fake-gemini-key-for-tests",
        "GOOGLE_GEMINI_BASE_URL": model_url,
        # `gemini -p` refuses an untrusted folder; a person trusts theirs once, interactively
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
        "NO_COLOR": "1",
    }


def gemini_argv(gemini: str, prompt: str) -> list[str]:
    return [gemini, "-m", MODEL, "-p", prompt]


def without_noise(stderr: str) -> str:
    return "".join(line for line in stderr.splitlines(keepends=True) if not line.startswith(NOISE_PREFIXES))
