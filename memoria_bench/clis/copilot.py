"""Running the real GitHub Copilot CLI (from npm) headless: where it is, the environment it runs in.

Copilot CLI is found at `$COPILOT_CLI_BIN` (`.ci/copilot-cli.sh` sets it), else installed by
`.ci/copilot-cli.sh --install-only` (npm, into a local folder). Its binary unpacks its runtime at
first start into `COPILOT_PKG_CACHE_HOME`, which the install script points at `pkg-cache` beside
`node_modules` and unpacks once; the tests use the same folder, so a fresh HOME starts in about a
second. It is pointed at a fake OpenAI Chat Completions API on 127.0.0.1 through its BYOK
variables (`COPILOT_PROVIDER_BASE_URL`, `COPILOT_PROVIDER_TYPE=openai`, a dummy
`COPILOT_PROVIDER_API_KEY`, `COPILOT_MODEL`) with `COPILOT_OFFLINE=true` (no GitHub sign-in, no
GitHub API) and auto-update off, in a HOME of its own (`~/.copilot` there).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from memoria_bench.clis import installed_binary
from memoria_bench.serve import REPO_ROOT

INSTALL_SCRIPT = REPO_ROOT / ".ci" / "copilot-cli.sh"
COPILOT_TIMEOUT_S = 90
MODEL = "copilot-fake"


def copilot_binary() -> str:
    return installed_binary("COPILOT_CLI_BIN", INSTALL_SCRIPT, "GitHub Copilot CLI")


def package_cache(copilot: str) -> Path:
    """Where the install script unpacked the runtime: `pkg-cache` beside `node_modules`."""
    return Path(copilot).parents[2] / "pkg-cache"


def copilot_env(base: Mapping[str, str], home: Path, copilot: str, model_base_url: str) -> dict[str, str]:
    """`base` (the test's or the bench's environment) with nothing of Copilot's, GitHub's or OpenAI's
    own, plus what points Copilot CLI at the fake API."""
    keep = {
        k: v for k, v in base.items() if not k.startswith(("COPILOT_", "GH_", "GITHUB_", "OPENAI_", "XDG_"))
    }
    return keep | {
        "HOME": str(home),
        "COPILOT_PKG_CACHE_HOME": str(package_cache(copilot)),
        "COPILOT_PROVIDER_BASE_URL": model_base_url,
        "COPILOT_PROVIDER_TYPE": "openai",
        "COPILOT_PROVIDER_API_KEY": "fake-provider-key-for-tests",
        "COPILOT_MODEL": MODEL,
        "COPILOT_OFFLINE": "true",
        "COPILOT_AUTO_UPDATE": "false",
        "NO_COLOR": "1",
    }


def copilot_argv(copilot: str, prompt: str, *extra: str) -> list[str]:
    """A headless run that prints only the agent's answer (`-s`)."""
    return [copilot, "-p", prompt, "-s", "--no-color", *extra]
