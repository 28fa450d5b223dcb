"""Point Qwen Code at Memoria's MCP endpoint (`memoria mcp install --agent qwen`), and out again.

Qwen Code (a fork of Gemini CLI) reads MCP servers from `mcpServers` in `~/.qwen/settings.json`
(user) or a project's `.qwen/settings.json`, in Gemini CLI's shape: a Streamable HTTP server is an
`httpUrl` with `headers`, `$VAR` and `${VAR}` in the settings are expanded from its environment,
and `"trust": true` lets it call the server's tools without asking (what a headless `qwen -p`
needs: opt in with `--approve-tools`). So the entry is `app.mcp.install_gemini`'s, in Qwen Code's
file (`app.mcp.installers` writes it): the key is never written (the `Authorization` header names
`${MEMORIA_CLIENT__API_KEY}`), and without that variable in Qwen Code's environment the tools are
unreachable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

Scope = Literal["user", "project"]
FOLDER = ".qwen"


def settings_file(scope: Scope, project_dir: Path, config_dir: Path | None = None) -> Path:
    """`settings.json` in `config_dir` when given, else the scope's Qwen Code settings file."""
    if config_dir is not None:
        return config_dir / "settings.json"
    return (project_dir if scope == "project" else Path.home()) / FOLDER / "settings.json"
