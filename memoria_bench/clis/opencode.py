"""Running the real OpenCode (from npm) headless: where it is, the HOME and environment it runs in.

OpenCode is found at `$OPENCODE_BIN` (`.ci/opencode.sh` sets it), else installed by
`.ci/opencode.sh --install-only` (npm, into a local folder). Its model is a custom provider of the
test HOME's `~/.config/opencode/opencode.json`: OpenAI-compatible (`@ai-sdk/openai-compatible`,
bundled in OpenCode) with its `baseURL` on the fake OpenAI Chat Completions API on 127.0.0.1
(`memoria_bench.clis.openai_chat_api`). Off: auto-update (`autoupdate`, `OPENCODE_DISABLE_AUTOUPDATE`),
sharing, the models.dev catalogue fetch (`OPENCODE_DISABLE_MODELS_FETCH`), LSP downloads, and the
registry for the npm install OpenCode starts for each config folder (`@opencode-ai/plugin`:
`npm_config_offline`). `settle_config_folder` gives a HOME that install's result, as on a machine
after OpenCode's first start.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memoria_bench.clis import installed_binary
from memoria_bench.serve import REPO_ROOT

INSTALL_SCRIPT = REPO_ROOT / ".ci" / "opencode.sh"
OPENCODE_TIMEOUT_S = 90
PROVIDER = "fake"
MODEL = "fake-model"


def user_config(model_base_url: str) -> dict[str, Any]:
    """What a person's own `opencode.json` holds in these tests (an install must keep it)."""
    return {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "model": f"{PROVIDER}/{MODEL}",
        "provider": {
            PROVIDER: {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Fake",
                "options": {"baseURL": model_base_url, "apiKey": "fake-openai-key-for-tests"},
                "models": {MODEL: {"name": "Fake model"}},
            }
        },
    }


def opencode_binary() -> str:
    return installed_binary("OPENCODE_BIN", INSTALL_SCRIPT, "OpenCode")


def config_file(home: Path) -> Path:
    return home / ".config" / "opencode" / "opencode.json"


def write_user_config(home: Path, model_base_url: str) -> Path:
    path = config_file(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(user_config(model_base_url), indent=2) + "\n")
    return path


def config_dependencies(binary: str) -> Path:
    """Where `.ci/agent-cli.sh opencode` installs what OpenCode puts in its config folder at its
    first start online: `config-deps/` in the folder the binary was installed into by npm."""
    return Path(binary).parents[2] / "config-deps"


def settle_config_folder(home: Path, binary: str) -> bool:
    """Leave HOME's OpenCode config folder as OpenCode leaves it after its first run on a machine
    online: a `package.json` naming `@opencode-ai/plugin` at OpenCode's version, and its
    `node_modules` (a link to `config_dependencies`). Without it every run retries that install, which
    fails offline, and when any plugin is present OpenCode waits for the attempt before its first
    prompt: a cost a person pays once, never per session. False when nothing is installed there
    (the runs then pay for the failing install, with or without Memoria)."""
    deps = config_dependencies(binary)
    if not (deps / "node_modules" / "@opencode-ai" / "plugin").is_dir():
        return False
    folder = config_file(home).parent
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        (folder / name).write_bytes((deps / name).read_bytes())
    (folder / "node_modules").symlink_to(deps / "node_modules", target_is_directory=True)
    return True


def opencode_env(base: Mapping[str, str], home: Path) -> dict[str, str]:
    """`base` (the test's or the bench's environment) with nothing of OpenCode's, OpenAI's or XDG's
    own, plus what keeps OpenCode on 127.0.0.1."""
    keep = {k: v for k, v in base.items() if not k.startswith(("OPENCODE_", "OPENAI_", "XDG_", "npm_"))}
    return keep | {
        "HOME": str(home),
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "npm_config_offline": "true",
        "NO_COLOR": "1",
    }


def opencode_argv(opencode: str, prompt: str) -> list[str]:
    return [opencode, "run", prompt]
