"""Where Codex CLI keeps its settings: `$CODEX_HOME/config.toml`, `~/.codex/config.toml` by default.

Both of Memoria's Codex writers (the hooks, `app.hooks.install_codex`; the MCP server,
`app.mcp.install_codex`) edit that one file, each with its own block (`app.client.toml_block`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

CONFIG_FILE = "config.toml"


def codex_home(env: Mapping[str, str] | None = None) -> Path:
    """`$CODEX_HOME` (resolved: Codex keys its hook trust entries by the resolved path), else `~/.codex`."""
    configured = (os.environ if env is None else env).get("CODEX_HOME", "").strip()
    return Path(configured).resolve() if configured else Path.home() / ".codex"


def config_file(config_dir: Path | None = None) -> Path:
    """Codex's `config.toml` in `config_dir` (resolved), else in `codex_home()`."""
    folder = config_dir.resolve() if config_dir is not None else codex_home()
    return folder / CONFIG_FILE
