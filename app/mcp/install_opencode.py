"""Point OpenCode at Memoria's MCP endpoint (`memoria mcp install --agent opencode`), and out again.

OpenCode reads MCP servers from the `mcp` object of its config, `opencode.json` in its config folder
(`$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`: user scope) or at a project's root
(project scope); a Streamable HTTP server is `{"type": "remote", "url": ..., "headers": ...}`.
OpenCode replaces `{env:NAME}` anywhere in its config with that variable from its environment, so
the `Authorization` header names `{env:MEMORIA_CLIENT__API_KEY}` and the key is never written; it
runs no command for headers, so without that variable the header is `Bearer ` and the tools are
unreachable (the install says so). Its `{file:PATH}` would read the key file instead, but a missing
file makes OpenCode refuse to start, so it is not used (docs/agents/opencode.md). `oauth: false`:
Memoria takes API keys, so OpenCode is not to start an OAuth flow when the server answers 401.

OpenCode names a server's tools `<server>_<tool>` (`memoria_memory_store`) and allows every tool
unless the person's `permission` says otherwise; `approve_tools` (opt in: `--approve-tools`) adds
the rule `"memoria_*": "allow"` as the last entry of the `permission` object (OpenCode lets the
last matching rule decide), so a config that asks for every tool (`"*": "ask"`), which a headless
`opencode run` answers by refusing the call, still lets it call Memoria's. A `permission` that is
one word (`"ask"`) for every tool is refused rather than rewritten.

The edit is `app.mcp.install`'s (only Memoria's entries are written or removed, everything else
keeps its order and the file its indentation; uninstall after install gives the file back byte
for byte; a file left holding `{}` is removed). A config with comments (OpenCode accepts JSONC) is
not JSON to this installer, which refuses it and leaves it as it is.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any, Literal

from app.client.json_file import JsonFileError, read_object, render_edit, write_atomically
from app.mcp.install import MCP_PATH, NAMESPACE_HEADER, SERVER_NAME, with_server, without_server
from memoria_hook_client.environment import ENV_API_KEY

Scope = Literal["user", "project"]
LOCATION = ("mcp",)
CONFIG_NAME = "opencode.json"
PERMISSION_RULE = f"{SERVER_NAME}_*"
"""OpenCode's permission key for every tool of the `memoria` server."""
KEY_HEADER = f"Bearer {{env:{ENV_API_KEY}}}"

OpenCodeConfigError = JsonFileError


def config_file(scope: Scope, project_dir: Path, config_dir: Path | None = None) -> Path:
    """`opencode.json` in `config_dir` when given, else the scope's OpenCode config file."""
    if config_dir is not None:
        return config_dir / CONFIG_NAME
    if scope == "project":
        return project_dir / CONFIG_NAME
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".config"
    return base / "opencode" / CONFIG_NAME


def server_entry(url: str, namespace: str | None) -> dict[str, Any]:
    """OpenCode's remote MCP server entry for Memoria at base URL `url`."""
    headers = {"Authorization": KEY_HEADER}
    if namespace:
        headers[NAMESPACE_HEADER] = namespace
    return {"type": "remote", "url": url.rstrip("/") + MCP_PATH, "headers": headers, "oauth": False}


def with_permission(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with `"memoria_*": "allow"` last in its `permission` object (created as needed)."""
    result = copy.deepcopy(data)
    permission = result.setdefault("permission", {})
    if not isinstance(permission, dict):
        raise OpenCodeConfigError(
            f"permission is {permission!r} for every tool, not an object of rules; "
            f'add "{PERMISSION_RULE}": "allow" yourself, the file was left as it is'
        )
    permission.pop(PERMISSION_RULE, None)
    permission[PERMISSION_RULE] = "allow"
    return result


def without_permission(data: dict[str, Any]) -> dict[str, Any]:
    """`data` without the `"memoria_*": "allow"` rule; a `permission` object it empties goes too."""
    result = copy.deepcopy(data)
    permission = result.get("permission")
    if not isinstance(permission, dict) or permission.get(PERMISSION_RULE) != "allow":
        return result
    del permission[PERMISSION_RULE]
    if not permission:
        del result["permission"]
    return result


def install_server(path: Path, url: str, namespace: str | None, approve_tools: bool) -> bool:
    """True when the file changed; OpenCodeConfigError when it cannot take the entry."""
    data, original = read_object(path)
    updated = with_server(data, LOCATION, server_entry(url, namespace))
    if approve_tools:
        updated = with_permission(updated)
    if updated == data and list(updated.get("permission", {})) == list(data.get("permission", {})):
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, render_edit(updated, original))
    return True


def uninstall_server(path: Path) -> bool:
    """True when Memoria's entry (or its permission rule) was removed."""
    if not path.exists():
        return False
    data, original = read_object(path)
    updated = without_permission(without_server(data, LOCATION))
    if updated == data:
        return False
    if updated:
        write_atomically(path, render_edit(updated, original))
    else:
        path.unlink()
    return True
