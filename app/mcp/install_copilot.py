"""Point GitHub Copilot CLI at Memoria's MCP endpoint (`memoria mcp install --agent copilot`), and out again.

Copilot CLI reads MCP servers from `mcpServers` in `~/.copilot/mcp-config.json` (`$COPILOT_HOME`
when that is set); a Streamable HTTP server is `{"type": "http", "url", "headers", "tools"}`,
`tools: ["*"]` offering every tool of the server. Copilot CLI expands `${VAR}` in the headers from
its environment (1.0.102 sends `Bearer <key>` for `Bearer ${VAR}`), so the `Authorization` header
names `${MEMORIA_CLIENT__API_KEY}` and the key is never written; it reads no key file, so without
that variable in its environment the tools are unreachable, and the install says so.

Copilot CLI keeps no tool permission in a file: a headless run (`copilot -p`) may call a server's
tools only when started with `--allow-tool=memoria` (or `--allow-all-tools`), which the install
says instead of writing anything.

The edit is `app.mcp.install`'s (only the `memoria` entry is written or removed, everything else
keeps its order and the file its indentation; a file left holding `{}` is removed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.client.copilot_home import copilot_home
from app.mcp.install import MCP_PATH, NAMESPACE_HEADER, SERVER_NAME, install, uninstall
from memoria_hook_client.environment import ENV_API_KEY

LOCATION = ("mcpServers",)
FILE_NAME = "mcp-config.json"
ALLOW_FLAG = f"--allow-tool={SERVER_NAME}"
"""What a `copilot` run needs to call Memoria's tools without asking."""


def config_file(config_dir: Path | None = None) -> Path:
    """`mcp-config.json` in `config_dir` when given, else in Copilot CLI's config folder."""
    return (config_dir if config_dir is not None else copilot_home()) / FILE_NAME


def server_entry(url: str, namespace: str | None) -> dict[str, Any]:
    """Copilot CLI's Streamable HTTP server entry for Memoria at base URL `url`."""
    headers = {"Authorization": f"Bearer ${{{ENV_API_KEY}}}"}
    if namespace:
        headers[NAMESPACE_HEADER] = namespace
    return {"type": "http", "url": url.rstrip("/") + MCP_PATH, "headers": headers, "tools": ["*"]}


def install_server(path: Path, url: str, namespace: str | None) -> bool:
    """True when the file changed; `app.mcp.install.ConfigFileError` when it is not a JSON object."""
    return install(path, LOCATION, server_entry(url, namespace))


def uninstall_server(path: Path) -> bool:
    """True when Memoria's entry was removed."""
    return uninstall(path, LOCATION)
