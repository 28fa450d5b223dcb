"""Point Codex CLI at Memoria's MCP endpoint (`memoria mcp install --agent codex`), and out again.

Codex reads MCP servers from `[mcp_servers.<name>]` tables of `$CODEX_HOME/config.toml`; a
Streamable HTTP server is a `url`, its bearer token read from the environment variable that
`bearer_token_env_var` names (Codex refuses a token written in the file, and reads no key file: the
key comes from `$MEMORIA_CLIENT__API_KEY` in Codex's environment), fixed headers in `http_headers`.
The entry goes in as one block of Memoria's at the end of the file (`app.client.toml_block`:
everything else keeps its bytes, uninstall gives the file back byte for byte).

Headless runs (`codex exec`, approval policy `never`) refuse an MCP tool call that needs approval
("MCP tool call requires approval, but approval policy is never", seen with Codex 0.171.0), so
`approve_tools` (opt in: `--approve-tools`) adds `default_tools_approval_mode = "approve"` for
Memoria's server alone. Codex lists the server's tools to the model as the namespace `mcp__memoria`.
"""

from __future__ import annotations

import json
from pathlib import Path

from app.client.codex_config import config_file
from app.client.toml_block import (
    Markers,
    TomlBlockError,
    parsed,
    read_text,
    with_block,
    without_block,
    write_or_remove,
)
from app.mcp.install import MCP_PATH, NAMESPACE_HEADER, SERVER_NAME
from memoria_hook_client.environment import ENV_API_KEY

MARKERS = Markers(
    begin="# >>> memoria mcp: `memoria mcp uninstall --agent codex` removes this block",
    end="# <<< memoria mcp",
)

CodexConfigError = TomlBlockError


def server_block(url: str, namespace: str | None, approve_tools: bool) -> str:
    """The `[mcp_servers.memoria]` table for Memoria at base URL `url`."""
    lines = [
        f"[mcp_servers.{SERVER_NAME}]",
        f"url = {json.dumps(url.rstrip('/') + MCP_PATH)}",
        f"bearer_token_env_var = {json.dumps(ENV_API_KEY)}",
    ]
    if namespace:
        header = f"{json.dumps(NAMESPACE_HEADER)} = {json.dumps(namespace, ensure_ascii=False)}"
        lines.append(f"http_headers = {{ {header} }}")
    if approve_tools:
        lines.append('default_tools_approval_mode = "approve"')
    return "\n".join(lines)


def install(
    config_dir: Path | None, url: str, namespace: str | None, approve_tools: bool
) -> tuple[Path, bool]:
    """(the file, whether it changed); TomlBlockError when the file cannot take the entry (a
    `memoria` server of the person's own, say)."""
    path = config_file(config_dir)
    original = read_text(path)
    base = without_block(original or "", MARKERS)
    if SERVER_NAME in parsed(base, path).get("mcp_servers", {}):
        raise TomlBlockError(
            f"{path} already has an MCP server named {SERVER_NAME} of its own; left as it is"
        )
    updated = with_block(base, server_block(url, namespace, approve_tools), MARKERS, path)
    return path, write_or_remove(path, original, updated)


def uninstall(config_dir: Path | None) -> tuple[Path, bool]:
    path = config_file(config_dir)
    original = read_text(path)
    if original is None:
        return path, False
    return path, write_or_remove(path, original, without_block(original, MARKERS))
