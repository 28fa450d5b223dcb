"""`memoria mcp install --agent <name>`: Memoria's MCP server in each coding agent's config.

Claude Code's writer is `app.mcp.install` (its scopes, key helper and permission rule are its own,
and `memoria mcp install` without `--agent` is Claude Code's). Every other agent's is registered in
`MCP_INSTALLERS` below as an `McpInstaller`: where its file is, how the entry goes in and out, and
what to tell the person (how the agent gets the key, what headless runs need).

`--agent all` acts on every agent whose command is on PATH, as `memoria hook install --agent all`
does (`app.hooks.installers.detected`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from app.client.json_file import JsonFileError
from app.client.toml_block import TomlBlockError
from app.mcp import (
    install_codex,
    install_copilot,
    install_cursor,
    install_gemini,
    install_opencode,
    install_qwen,
)
from memoria_hook_client.environment import ENV_API_KEY

McpScope = Literal["user", "project"]


class McpConfigError(Exception):
    """The agent's config file cannot be read or cannot take the entry; it was left as it is."""


@dataclass(frozen=True, slots=True)
class McpRequest:
    scope: McpScope
    project_dir: Path
    url: str = ""
    namespace: str | None = None
    approve_tools: bool = False
    config_dir: Path | None = None
    """The agent's config folder to edit instead of its own (tests; `--config-dir`)."""


@dataclass(frozen=True, slots=True)
class McpReport:
    path: Path
    changed: bool
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class McpInstaller:
    """One agent's MCP config writer."""

    name: str
    label: str
    executable: str
    """The agent's command, looked for on PATH by `--agent all`."""
    install: Callable[[McpRequest], McpReport]
    uninstall: Callable[[McpRequest], McpReport]
    other_executables: tuple[str, ...] = ()
    """Other commands that mean the agent is installed (as `app.hooks.agent_install.AgentInstaller`'s)."""

    @property
    def executables(self) -> tuple[str, ...]:
        return (self.executable, *self.other_executables)


def key_note(label: str, env: Mapping[str, str] | None = None) -> str:
    """How an agent that reads no key file gets the key, and whether this shell would give it one."""
    note = f"{label} sends the key from ${ENV_API_KEY} (it reads no key file): "
    note += "start it with that variable set"
    if not (os.environ if env is None else env).get(ENV_API_KEY):
        note += " (it is not set in this shell: the tools would be unreachable)"
    return note + "."


def _codex_install(request: McpRequest) -> McpReport:
    if request.scope == "project":
        raise McpConfigError("--agent codex installs in user scope ($CODEX_HOME/config.toml) only")
    try:
        path, changed = install_codex.install(
            request.config_dir, request.url, request.namespace, request.approve_tools
        )
    except TomlBlockError as exc:
        raise McpConfigError(str(exc)) from exc
    notes = [key_note("Codex")]
    if not request.approve_tools:
        notes.append(
            "Headless runs (codex exec) refuse tool calls that need approval: add --approve-tools to let "
            "Codex call Memoria's tools without asking."
        )
    return McpReport(path, changed, notes)


def _codex_uninstall(request: McpRequest) -> McpReport:
    try:
        path, removed = install_codex.uninstall(request.config_dir)
    except TomlBlockError as exc:
        raise McpConfigError(str(exc)) from exc
    return McpReport(path, removed)


def _settings_json(
    label: str, settings_file: Callable[[McpScope, Path, Path | None], Path], headless: str
) -> tuple[Callable[[McpRequest], McpReport], Callable[[McpRequest], McpReport]]:
    """Install and uninstall for an agent with Gemini CLI's `mcpServers` in a settings.json."""

    def install(request: McpRequest) -> McpReport:
        path = settings_file(request.scope, request.project_dir, request.config_dir)
        try:
            changed = install_gemini.install_server(
                path, request.url, request.namespace, request.approve_tools
            )
        except JsonFileError as exc:
            raise McpConfigError(str(exc)) from exc
        notes = [key_note(label)]
        if not request.approve_tools:
            notes.append(
                f"Headless runs ({headless}) cannot confirm tool calls: add --approve-tools to trust "
                f"Memoria's server, so {label} calls its tools without asking."
            )
        return McpReport(path, changed, notes)

    def uninstall(request: McpRequest) -> McpReport:
        path = settings_file(request.scope, request.project_dir, request.config_dir)
        try:
            return McpReport(path, install_gemini.uninstall_server(path))
        except JsonFileError as exc:
            raise McpConfigError(str(exc)) from exc

    return install, uninstall


def _opencode_install(request: McpRequest) -> McpReport:
    path = install_opencode.config_file(request.scope, request.project_dir, request.config_dir)
    try:
        changed = install_opencode.install_server(path, request.url, request.namespace, request.approve_tools)
    except JsonFileError as exc:
        raise McpConfigError(str(exc)) from exc
    notes = [key_note("OpenCode")]
    if not request.approve_tools:
        notes.append(
            "OpenCode lets the model call MCP tools unless your `permission` rules ask first: add "
            f'--approve-tools to allow Memoria\'s ("{install_opencode.PERMISSION_RULE}": "allow") '
            "for headless `opencode run`."
        )
    return McpReport(path, changed, notes)


def _opencode_uninstall(request: McpRequest) -> McpReport:
    path = install_opencode.config_file(request.scope, request.project_dir, request.config_dir)
    try:
        return McpReport(path, install_opencode.uninstall_server(path))
    except JsonFileError as exc:
        raise McpConfigError(str(exc)) from exc


def _copilot_install(request: McpRequest) -> McpReport:
    if request.scope == "project":
        raise McpConfigError("--agent copilot installs in user scope (~/.copilot/mcp-config.json) only")
    path = install_copilot.config_file(request.config_dir)
    try:
        changed = install_copilot.install_server(path, request.url, request.namespace)
    except JsonFileError as exc:
        raise McpConfigError(str(exc)) from exc
    notes = [
        key_note("GitHub Copilot CLI"),
        "Copilot CLI keeps no tool permission in a file: headless runs (copilot -p) call Memoria's "
        f"tools only when started with {install_copilot.ALLOW_FLAG}.",
    ]
    return McpReport(path, changed, notes)


def _copilot_uninstall(request: McpRequest) -> McpReport:
    path = install_copilot.config_file(request.config_dir)
    try:
        return McpReport(path, install_copilot.uninstall_server(path))
    except JsonFileError as exc:
        raise McpConfigError(str(exc)) from exc


def _cursor_install(request: McpRequest) -> McpReport:
    path = install_cursor.config_file(request.scope, request.project_dir, request.config_dir)
    try:
        changed = install_cursor.install_server(path, request.url, request.namespace)
    except JsonFileError as exc:
        raise McpConfigError(str(exc)) from exc
    notes = [key_note("Cursor")]
    if request.approve_tools:
        notes.append(
            "Cursor keeps no tool permission in mcp.json: whether its agent asks before calling "
            "Memoria's tools is Cursor's own setting (nothing was written for --approve-tools)."
        )
    return McpReport(path, changed, notes)


def _cursor_uninstall(request: McpRequest) -> McpReport:
    path = install_cursor.config_file(request.scope, request.project_dir, request.config_dir)
    try:
        return McpReport(path, install_cursor.uninstall_server(path))
    except JsonFileError as exc:
        raise McpConfigError(str(exc)) from exc


_gemini_install, _gemini_uninstall = _settings_json("Gemini CLI", install_gemini.settings_file, "gemini -p")
_qwen_install, _qwen_uninstall = _settings_json("Qwen Code", install_qwen.settings_file, "qwen -p")

MCP_INSTALLERS: dict[str, McpInstaller] = {
    each.name: each
    for each in (
        McpInstaller("codex", "Codex", "codex", _codex_install, _codex_uninstall),
        McpInstaller("gemini", "Gemini CLI", "gemini", _gemini_install, _gemini_uninstall),
        McpInstaller("qwen", "Qwen Code", "qwen", _qwen_install, _qwen_uninstall),
        McpInstaller("opencode", "OpenCode", "opencode", _opencode_install, _opencode_uninstall),
        McpInstaller("copilot", "GitHub Copilot CLI", "copilot", _copilot_install, _copilot_uninstall),
        McpInstaller("cursor", "Cursor", "cursor-agent", _cursor_install, _cursor_uninstall, ("cursor",)),
    )
}
"""Every agent but Claude Code, by name (the names of `app.hooks.hosts.HOSTS`)."""
