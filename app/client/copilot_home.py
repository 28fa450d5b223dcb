"""Where GitHub Copilot CLI keeps its configuration: `$COPILOT_HOME`, else `~/.copilot`.

Both of Memoria's Copilot writers need it (the hook file, `app.hooks.install_copilot`, and the MCP
server list, `app.mcp.install_copilot`), which sit side by side and may not import each other.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

ENV_HOME = "COPILOT_HOME"


def copilot_home(env: Mapping[str, str] | None = None) -> Path:
    """Copilot CLI's config folder as it finds it in `env` (default: this process's environment)."""
    configured = (os.environ if env is None else env).get(ENV_HOME)
    return Path(configured) if configured else Path.home() / ".copilot"
