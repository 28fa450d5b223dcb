"""Point Cursor at Memoria's MCP endpoint (`memoria mcp install --agent cursor`), and out again.

Cursor reads MCP servers from `mcpServers` in `~/.cursor/mcp.json` (user scope) and in a project's
`.cursor/mcp.json` (project scope); an entry with a `url` (no `command`) is a remote server, reached
over Streamable HTTP (or SSE), with the `headers` it names. Cursor replaces `${env:NAME}` in those
values with that variable from its environment, so the `Authorization` header names
`${env:MEMORIA_CLIENT__API_KEY}` and the key is never written; it reads no key file, so without that
variable in Cursor's environment the tools are unreachable, and the install says so.

Cursor keeps no per-server tool permission in this file: whether its agent asks before calling a
tool is Cursor's own setting, so `--approve-tools` writes nothing here (the install says so).

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
FOLDER = ".cursor"
FILE_NAME = "mcp.json"


def config_file(scope: Scope, project_dir: Path, config_dir: Path | None = None) -> Path:
    """`mcp.json` in `config_dir` when given, else in the scope's `.cursor` folder."""
    if config_dir is not None:
        return config_dir / FILE_NAME
    return (project_dir if scope == "project" else Path.home()) / FOLDER / FILE_NAME


def server_entry(url: str, namespace: str | None) -> dict[str, Any]:
    """Cursor's remote server entry for Memoria at base URL `url`."""
    headers = {"Authorization": f"Bearer ${{env:{ENV_API_KEY}}}"}
    if namespace:
        headers[NAMESPACE_HEADER] = namespace
    return {"url": url.rstrip("/") + MCP_PATH, "headers": headers}


def install_server(path: Path, url: str, namespace: str | None) -> bool:
    """True when the file changed; `JsonFileError` when it is not a JSON object."""
    return install(path, LOCATION, server_entry(url, namespace))


def uninstall_server(path: Path) -> bool:
    """True when Memoria's entry was removed."""
    return uninstall(path, LOCATION)
