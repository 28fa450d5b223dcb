"""Point Gemini CLI at Memoria's MCP endpoint (`memoria mcp install --agent gemini`), and out again.

Gemini CLI reads MCP servers from `mcpServers` in `~/.gemini/settings.json` (user) or a project's
`.gemini/settings.json`; a Streamable HTTP server is an `httpUrl` with `headers`. Gemini CLI
expands `$VAR` and `${VAR}` anywhere in its settings from its environment, so the `Authorization`
header names `${MEMORIA_CLIENT__API_KEY}` and the key is never written; it reads no key file, so
without that variable in its environment the header is empty and the tools are unreachable.

A call to a server's tool waits for the person's confirmation unless the server is trusted; a
headless run (`gemini -p`) has nobody to ask, so `trust` (opt in: `--approve-tools`) adds
`"trust": true` to Memoria's entry alone. Gemini CLI offers the server's tools to the model under
names of their own (`tests/test_gemini_cli_mcp.py` reads them off the request).

The edit is `app.mcp.install`'s (only the `memoria` entry is written or removed, everything else
keeps its order and the file its indentation; a file left holding `{}` is removed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from app.mcp.install import MCP_PATH, NAMESPACE_HEADER, install, uninstall
from memoria_hook_client.environment import ENV_API_KEY

Scope = Literal["user", "project"]
LOCATION = ("mcpServers",)


def settings_file(scope: Scope, project_dir: Path, config_dir: Path | None = None) -> Path:
    """`settings.json` in `config_dir` when given, else the scope's Gemini CLI settings file."""
    if config_dir is not None:
        return config_dir / "settings.json"
    if scope == "project":
        return project_dir / ".gemini" / "settings.json"
    return Path.home() / ".gemini" / "settings.json"


def server_entry(url: str, namespace: str | None, trust: bool) -> dict[str, Any]:
    """Gemini CLI's Streamable HTTP server entry for Memoria at base URL `url`."""
    headers = {"Authorization": f"Bearer ${{{ENV_API_KEY}}}"}
    if namespace:
        headers[NAMESPACE_HEADER] = namespace
    entry: dict[str, Any] = {"httpUrl": url.rstrip("/") + MCP_PATH, "headers": headers}
    if trust:
        entry["trust"] = True
    return entry


def install_server(path: Path, url: str, namespace: str | None, trust: bool) -> bool:
    """True when the file changed; `app.mcp.install.ConfigFileError` when it is not a JSON object."""
    return install(path, LOCATION, server_entry(url, namespace, trust))


def uninstall_server(path: Path) -> bool:
    """True when Memoria's entry was removed."""
    return uninstall(path, LOCATION)
