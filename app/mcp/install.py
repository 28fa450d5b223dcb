"""Point Claude Code at Memoria's MCP endpoint: the `memoria` entry of its `mcpServers`, in the file
and place Claude Code keeps for each scope, and out again. Runs on the client.

| scope | file | where in it |
|---|---|---|
| `project` | `<project>/.mcp.json` (committed, shared with the team) | `mcpServers.memoria` |
| `local` | `~/.claude.json` (yours, this project only) | `projects["<project path>"].mcpServers.memoria` |
| `user` | `~/.claude.json` (yours, every project) | `mcpServers.memoria` |

The edit is surgical: only the `memoria` entry is written or removed, every other server and key
keeps its value and order, the file keeps its indentation and final newline, and an install that
would change nothing does not touch the file (no diff on re-install); an uninstall that leaves the
file empty removes it (a fresh project's `.mcp.json` goes as it came). The API key is never written:
the `Authorization` header names `${MEMORIA_CLIENT__API_KEY}`, which Claude Code expands from its
environment. Project and local installs carry the project's namespace (mapped prefix, else the git
repository's project identity, computed here on the client) in the `X-Memoria-Namespace` header, so what the
agent stores in one repository is recalled there and not elsewhere.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Literal

from app.client.json_file import JsonFileError, read_object, render_like, write_atomically
from memoria_hook_client.environment import ENV_API_KEY
from memoria_hook_client.namespace import namespace_for_cwd

Scope = Literal["user", "project", "local"]
SERVER_NAME = "memoria"
NAMESPACE_HEADER = "X-Memoria-Namespace"
MCP_PATH = "/mcp"

CLAUDE_MD = """\
## Memory (Memoria)
You have long-term memory through the `memoria` MCP tools; it outlives this session.
- Before starting a task, and whenever I mention earlier work or a decision, call `memory_recall`.
- When you learn something a later session needs, call `memory_store` at once: decisions and why,
  my preferences and corrections, project conventions, runbook steps, fixes that took effort.
  One self-contained fact per memory; never store secrets or task progress.
- When a memory turns out wrong or outdated, fix it with `memory_update` or `memory_forget`.
"""


ConfigFileError = JsonFileError
"""The configuration file cannot be read or is not a JSON object; it was left as it is."""


def config_path(scope: Scope, project_dir: Path) -> Path:
    if scope == "project":
        return project_dir / ".mcp.json"
    return Path.home() / ".claude.json"


def servers_location(scope: Scope, project_dir: Path) -> tuple[str, ...]:
    """The keys leading to the `mcpServers` object within the scope's file."""
    if scope == "local":
        return ("projects", str(project_dir.expanduser().resolve()), "mcpServers")
    return ("mcpServers",)


def project_namespace(
    project_dir: Path, mapping: dict[str, str] | None = None, default: str | None = None
) -> str | None:
    """The namespace of a session started in `project_dir`, as `memoria remember` computes it."""
    return namespace_for_cwd(str(project_dir.expanduser().absolute()), mapping, default)


def server_entry(url: str, namespace: str | None) -> dict[str, Any]:
    """Claude Code's `http` server entry for Memoria at base URL `url`."""
    headers = {"Authorization": f"Bearer ${{{ENV_API_KEY}}}"}
    if namespace:
        headers[NAMESPACE_HEADER] = namespace
    return {"type": "http", "url": url.rstrip("/") + MCP_PATH, "headers": headers}


def with_server(data: dict[str, Any], location: tuple[str, ...], entry: dict[str, Any]) -> dict[str, Any]:
    """`data` with `entry` as the `memoria` server at `location`; objects on the way are created."""
    result = copy.deepcopy(data)
    node = result
    for key in location:
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            raise ConfigFileError(f"{'.'.join(location)}: {key!r} is not an object")
        node = child
    node[SERVER_NAME] = entry
    return result


def without_server(data: dict[str, Any], location: tuple[str, ...]) -> dict[str, Any]:
    """`data` without the `memoria` server at `location`; an `mcpServers` we emptied goes too,
    nothing else does."""
    result = copy.deepcopy(data)
    parents: list[dict[str, Any]] = []
    node: Any = result
    for key in location:
        if not isinstance(node, dict) or not isinstance(node.get(key), dict):
            return result
        parents.append(node)
        node = node[key]
    if SERVER_NAME not in node:
        return result
    del node[SERVER_NAME]
    if not node:
        del parents[-1][location[-1]]
    return result


def install(path: Path, location: tuple[str, ...], entry: dict[str, Any]) -> bool:
    """True when the file changed (False: this exact entry was already there)."""
    data, original = read_object(path)
    updated = with_server(data, location, entry)
    if updated == data:
        return False
    write_atomically(path, render_like(updated, original))
    return True


def uninstall(path: Path, location: tuple[str, ...]) -> bool:
    """True when a `memoria` server entry was removed. A file left holding `{}` is removed, as
    `memoria hook uninstall` does: what an install into a fresh project created goes with it."""
    if not path.exists():
        return False
    data, original = read_object(path)
    updated = without_server(data, location)
    if updated == data:
        return False
    if updated:
        write_atomically(path, render_like(updated, original))
    else:
        path.unlink()
    return True
