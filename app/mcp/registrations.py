"""Where each coding agent has Memoria's MCP server registered, for `memoria status`.

`READERS` holds one reader per agent that `memoria mcp install --agent <name>` serves, by the
agent's name (the names of `app.hooks.hosts.HOSTS`); an agent without one has no MCP install yet.
A reader looks at the files that agent reads for a session in a project and gives back each
`memoria` entry it finds there: its scope, file, endpoint URL and where the agent takes the key from.
A file that cannot be read counts as holding no entry (the installers name such a file).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from app.client.codex_config import config_file
from app.client.toml_block import TomlBlockError, parsed, read_text
from app.mcp import install as claude_code
from app.mcp import install_copilot, install_cursor, install_gemini, install_opencode, install_qwen
from app.mcp.install import SERVER_NAME


@dataclass(frozen=True, slots=True)
class Registration:
    """One `memoria` MCP server entry an agent would load."""

    scope: str
    file: Path
    url: str | None
    """The MCP endpoint as configured (`<base>/mcp`); None when the entry names none."""
    key_from_env_only: bool
    """The agent sends the key from `$MEMORIA_CLIENT__API_KEY` alone (it reads no key file)."""


def base_url(endpoint: str) -> str:
    """The Memoria base URL of an MCP endpoint URL (`http://h:p/mcp` -> `http://h:p`)."""
    trimmed = endpoint.rstrip("/")
    return trimmed.removesuffix(claude_code.MCP_PATH) or trimmed


def _url(entry: dict[str, Any], *names: str) -> str | None:
    for name in names:
        value = entry.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def claude_code_registrations(project: Path) -> list[Registration]:
    """Claude Code: `~/.claude.json` (user, and local per project) and the project's `.mcp.json`;
    a user or local entry runs the key helper (the key file too), a project one sends the variable."""
    found = []
    for scope in get_args(claude_code.Scope):
        path = claude_code.config_path(scope, project)
        entry = claude_code.installed_entry(path, claude_code.servers_location(scope, project))
        if entry is not None:
            helper = isinstance(entry.get("headersHelper"), str)
            found.append(Registration(scope, path, _url(entry, "url"), key_from_env_only=not helper))
    return found


def codex_registrations(_project: Path) -> list[Registration]:
    """Codex CLI: `[mcp_servers.memoria]` of `$CODEX_HOME/config.toml` (user scope only)."""
    path = config_file()
    try:
        text = read_text(path)
        servers = parsed(text, path).get("mcp_servers", {}) if text is not None else {}
    except TomlBlockError:
        return []
    entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    if not isinstance(entry, dict):
        return []
    return [Registration("user", path, _url(entry, "url"), key_from_env_only=True)]


def gemini_registrations(
    project: Path, settings_file: Callable[..., Path] = install_gemini.settings_file
) -> list[Registration]:
    """Gemini CLI: `mcpServers.memoria` of `~/.gemini/settings.json` and the project's (Qwen Code:
    the same in `.qwen`, given its `settings_file`)."""
    found = []
    for scope in get_args(install_gemini.Scope):
        path = settings_file(scope, project)
        entry = claude_code.installed_entry(path, install_gemini.LOCATION)
        if entry is not None:
            found.append(Registration(scope, path, _url(entry, "httpUrl", "url"), key_from_env_only=True))
    return found


def opencode_registrations(project: Path) -> list[Registration]:
    """OpenCode: `mcp.memoria` of the user's `opencode.json` and the project's."""
    found = []
    for scope in get_args(install_opencode.Scope):
        path = install_opencode.config_file(scope, project)
        entry = claude_code.installed_entry(path, install_opencode.LOCATION)
        if entry is not None:
            found.append(Registration(scope, path, _url(entry, "url"), key_from_env_only=True))
    return found


def copilot_registrations(_project: Path) -> list[Registration]:
    """GitHub Copilot CLI: `mcpServers.memoria` of `mcp-config.json` in its config folder (user scope)."""
    path = install_copilot.config_file()
    entry = claude_code.installed_entry(path, install_copilot.LOCATION)
    if entry is None:
        return []
    return [Registration("user", path, _url(entry, "url"), key_from_env_only=True)]


def cursor_registrations(project: Path) -> list[Registration]:
    """Cursor: `mcpServers.memoria` of `~/.cursor/mcp.json` and the project's `.cursor/mcp.json` (one
    file, the user's, when the project is the home folder)."""
    found: list[Registration] = []
    for scope in get_args(install_cursor.Scope):
        path = install_cursor.config_file(scope, project)
        if any(path == seen.file for seen in found):
            continue
        entry = claude_code.installed_entry(path, install_cursor.LOCATION)
        if entry is not None:
            found.append(Registration(scope, path, _url(entry, "url"), key_from_env_only=True))
    return found


READERS: dict[str, Callable[[Path], list[Registration]]] = {
    "claude-code": claude_code_registrations,
    "codex": codex_registrations,
    "gemini": gemini_registrations,
    "qwen": lambda project: gemini_registrations(project, install_qwen.settings_file),
    "opencode": opencode_registrations,
    "copilot": copilot_registrations,
    "cursor": cursor_registrations,
}
"""Per agent with an MCP install: its registrations for a session in a project."""
