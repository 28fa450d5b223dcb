"""Point Claude Code at Memoria's MCP endpoint: the `memoria` entry of its `mcpServers`, in the file
and place Claude Code keeps for each scope, and out again. Runs on the client.

| scope | file | where in it |
|---|---|---|
| `project` | `<project>/.mcp.json` (committed, shared with the team) | `mcpServers.memoria` |
| `local` | `~/.claude.json` (yours, this project only) | `projects["<project path>"].mcpServers.memoria` |
| `user` | `~/.claude.json` (yours, every project) | `mcpServers.memoria` |

The edit is surgical: only the `memoria` entry is written or removed, every other server and key
keeps its place and exact text (`render_edit`: an uninstall gives back the bytes the install
found), an install that would change nothing does not touch the file (no diff on re-install); an
uninstall that leaves the file empty removes it (a fresh project's `.mcp.json` goes as it came).
The API key is never written: the `Authorization` header names `${MEMORIA_CLIENT__API_KEY}`, which
Claude Code expands from its environment. Local and user installs (files of yours alone) also name
a `headersHelper`, `app.mcp.key_header`, which Claude Code runs at connection and which reads the
key as the hook does (the variable, else the key file of `memoria login`), so a shell with only the
key file reaches the tools too; a project install (`.mcp.json`, committed) cannot name a command of
this machine, so it needs the variable, and the install warns when Claude Code would send no key.
Project and local installs carry the project's namespace (mapped prefix, else the repository's
project identity from its origin remote: docs/projects.md; computed here on the client) in the
`X-Memoria-Namespace` header, so what the agent stores in one repository is recalled there and not
elsewhere.

`--allow-tools` adds one permission rule, `mcp__memoria` (every tool of the server), to your own
Claude Code settings (`permissions_path`), so a headless `claude -p` may call them; the uninstall
takes it out again, and the emptied `allow` list and `permissions` object with it.
"""

from __future__ import annotations

import copy
import shlex
import sys
from pathlib import Path
from typing import Any, Literal

from app.client.json_file import JsonFileError, read_object, render_edit, write_atomically
from memoria_hook_client.environment import ENV_API_KEY, KeyFileError, key_from_environment
from memoria_hook_client.namespace import namespace_for_cwd

Scope = Literal["user", "project", "local"]
SERVER_NAME = "memoria"
NAMESPACE_HEADER = "X-Memoria-Namespace"
MCP_PATH = "/mcp"
PERMISSION_RULE = f"mcp__{SERVER_NAME}"
"""Claude Code's permission rule for every tool of the `memoria` server."""
KEY_HELPER_MODULE = "app.mcp.key_header"

CLAUDE_MD = """\
## Memory (Memoria)
You have long-term memory through the `memoria` MCP tools; it outlives this session.
- The prompt hook, when installed, adds the memories relevant to each prompt; call `memory_recall`
  when you need more: I mention earlier work or a decision, or before asking what I told you before.
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


def permissions_path(scope: Scope, project_dir: Path) -> Path:
    """Where `--allow-tools` writes its rule: `~/.claude/settings.json` for a user install, else the
    project's `.claude/settings.local.json` (yours, not committed). Not the committed
    `.claude/settings.json`, even for a project install: Claude Code ignores the `permissions.allow`
    of that file in a workspace whose trust dialog was never accepted (any fresh clone run with
    `claude -p`), and allowing tools is each user's choice."""
    if scope == "user":
        return Path.home() / ".claude" / "settings.json"
    return project_dir / ".claude" / "settings.local.json"


def key_helper() -> str | None:
    """The `headersHelper` command: this Python running `app.mcp.key_header`. None when its path
    is not what Claude Code accepts there (printable ASCII, no run of four spaces)."""
    command = shlex.join([sys.executable, "-m", KEY_HELPER_MODULE])
    if not command.isascii() or not command.isprintable() or "    " in command:
        return None
    return command


def server_entry(url: str, namespace: str | None, helper: str | None = None) -> dict[str, Any]:
    """Claude Code's `http` server entry for Memoria at base URL `url`. The key is sent from
    `${MEMORIA_CLIENT__API_KEY}`; with `helper`, a `headersHelper` command, Claude Code asks that
    command too, and its header wins (it falls back on the variable where it does not run the
    helper: a local install in a workspace whose trust dialog was never accepted)."""
    headers = {"Authorization": f"Bearer ${{{ENV_API_KEY}}}"}
    if namespace:
        headers[NAMESPACE_HEADER] = namespace
    entry: dict[str, Any] = {"type": "http", "url": url.rstrip("/") + MCP_PATH, "headers": headers}
    if helper:
        entry["headersHelper"] = helper
    return entry


def workspace_trusted(project_dir: Path) -> bool:
    """Whether Claude Code has the trust dialog of `project_dir` accepted (`~/.claude.json`): it runs
    the `headersHelper` of a local or project install only then."""
    try:
        data, _ = read_object(Path.home() / ".claude.json")
    except JsonFileError:
        return False
    project = data.get("projects", {}).get(str(project_dir.expanduser().resolve()))
    return isinstance(project, dict) and project.get("hasTrustDialogAccepted") is True


def key_problem(entry: dict[str, Any], env: dict[str, str], helper_runs: bool) -> str | None:
    """Why Claude Code, started with `env`, would reach no tools through `entry` (no key it would
    send); None when it has one. `helper_runs`: whether Claude Code runs the entry's helper here."""
    if env.get(ENV_API_KEY, "").strip():
        return None
    try:
        key_from_environment(env)
    except KeyFileError as exc:
        return f"{exc}; or run `memoria login`"
    if isinstance(entry.get("headersHelper"), str):
        if helper_runs:
            return None
        return (
            f"{ENV_API_KEY} is not set, and Claude Code runs the key helper of a local install only "
            "in a workspace whose trust dialog you accepted (start `claude` here once interactively)"
        )
    return (
        f"{ENV_API_KEY} is not set: Claude Code sends the key from that variable only, "
        "so a session started without it gets no memory tools (the key file is not read)"
    )


def installed_entry(path: Path, location: tuple[str, ...]) -> dict[str, Any] | None:
    """The `memoria` server entry at `location` in `path`; None when there is none (or the file
    cannot be read)."""
    try:
        data, _ = read_object(path)
    except JsonFileError:
        return None
    node: Any = data
    for key in (*location, SERVER_NAME):
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node if isinstance(node, dict) else None


def tools_allowed(path: Path) -> bool:
    """Whether `path` (a Claude Code settings file) holds the `mcp__memoria` allow rule."""
    try:
        data, _ = read_object(path)
    except JsonFileError:
        return False
    permissions = data.get("permissions")
    allow = permissions.get("allow") if isinstance(permissions, dict) else None
    return isinstance(allow, list) and PERMISSION_RULE in allow


def with_permission(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with `mcp__memoria` in `permissions.allow` (created as needed)."""
    result = copy.deepcopy(data)
    permissions = result.setdefault("permissions", {})
    if not isinstance(permissions, dict) or not isinstance(permissions.setdefault("allow", []), list):
        raise ConfigFileError("permissions.allow is not a list")
    if PERMISSION_RULE not in permissions["allow"]:
        permissions["allow"].append(PERMISSION_RULE)
    return result


def without_permission(data: dict[str, Any]) -> dict[str, Any]:
    """`data` without `mcp__memoria` in `permissions.allow`; an `allow` list or `permissions` object
    that leaves empty goes too, nothing else does."""
    result = copy.deepcopy(data)
    permissions = result.get("permissions")
    if not isinstance(permissions, dict) or not isinstance(permissions.get("allow"), list):
        return result
    if PERMISSION_RULE not in permissions["allow"]:
        return result
    permissions["allow"] = [rule for rule in permissions["allow"] if rule != PERMISSION_RULE]
    if not permissions["allow"]:
        del permissions["allow"]
    if not permissions:
        del result["permissions"]
    return result


def allow_tools(path: Path) -> bool:
    """True when the file changed (False: the rule was there)."""
    data, original = read_object(path)
    updated = with_permission(data)
    if updated == data:
        return False
    write_atomically(path, render_edit(updated, original))
    return True


def disallow_tools(path: Path) -> bool:
    """True when the rule was removed; a file left holding `{}` is removed."""
    if not path.exists():
        return False
    data, original = read_object(path)
    updated = without_permission(data)
    if updated == data:
        return False
    if updated:
        write_atomically(path, render_edit(updated, original))
    else:
        path.unlink()
    return True


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
    write_atomically(path, render_edit(updated, original))
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
        write_atomically(path, render_edit(updated, original))
    else:
        path.unlink()
    return True
