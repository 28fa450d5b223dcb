"""Running the real Codex CLI (from npm) headless: where it is, its config and environment.

Codex is found at `$CODEX_BIN` (`.ci/codex.sh` sets it), else installed by `.ci/codex.sh
--install-only` (npm, into a local folder). Its model is a fake OpenAI Responses API on 127.0.0.1
(`memoria_bench.clis.responses_api`), named as a custom `model_provider` of the person's own
`config.toml` (`wire_api = "responses"`, its key read from `FAKE_RESPONSES_KEY`), with update checks
and analytics off; it runs with its own HOME and `CODEX_HOME`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from memoria_bench.clis import installed_binary
from memoria_bench.serve import REPO_ROOT

INSTALL_SCRIPT = REPO_ROOT / ".ci" / "codex.sh"
CODEX_TIMEOUT_S = 120
KEY_VARIABLE = "FAKE_RESPONSES_KEY"


def codex_binary() -> str:
    return installed_binary("CODEX_BIN", INSTALL_SCRIPT, "Codex CLI")


def codex_home(home: Path) -> Path:
    return home / ".codex"


def write_provider(home: Path, model_url: str) -> Path:
    """The person's own Codex settings in `home`: the fake model as a custom provider, telemetry off."""
    config = codex_home(home) / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        'model = "fake-model"\n'
        'model_provider = "fake"\n'
        "check_for_update_on_startup = false\n\n"
        "[analytics]\nenabled = false\n\n"
        "[model_providers.fake]\n"
        'name = "Fake Responses API"\n'
        f'base_url = "{model_url}"\n'
        f'env_key = "{KEY_VARIABLE}"\n'
        'wire_api = "responses"\n'
    )
    return config


def codex_env(base: Mapping[str, str], home: Path) -> dict[str, str]:
    """`base` with nothing of OpenAI's or Codex's own, plus the HOME, `CODEX_HOME` and fake key."""
    keep = {k: v for k, v in base.items() if not k.startswith(("OPENAI_", "CODEX", "XDG_"))}
    return keep | {
        "HOME": str(home),
        "CODEX_HOME": str(codex_home(home)),
        KEY_VARIABLE: "sk-fake-key-for-tests",
        "NO_COLOR": "1",
    }


def codex_argv(codex: str, prompt: str) -> list[str]:
    """One headless session (`codex exec`) on `prompt`, allowed to run commands in its folder."""
    return [codex, "exec", "--sandbox", "danger-full-access", prompt]
