"""`memoria hook install --agent opencode`: Memoria's plugin file in OpenCode's plugin folder.

OpenCode has no command hooks; it loads every `plugins/*.js` (and `plugin/`, `*.ts`) of its config
folder, `$XDG_CONFIG_HOME/opencode` (default `~/.config/opencode`, user scope), and of a project's
`.opencode` folder (project scope), and calls a plugin's `chat.message` hook with each prompt's
message and parts before they are saved and sent to the model (read off OpenCode 1.18.33's bundle).
So the install writes one file of Memoria's, `plugins/memoria.js`, from the template
`opencode_plugin.js` beside this module, with the hook client's commands built as for every other
agent (`command_hook(..., agent="opencode")`), so the plugin runs the same stdlib client:

- before a session's first prompt, `session-start` (the pinned and most important memories);
- for every prompt, `user-prompt-submit` (the memories recalled for it), each answer added to the
  prompt's message as a synthetic text part (the model reads it, OpenCode does not show it);
- when a session goes idle (the `session.idle` event), `capture`, on the session's messages as the
  plugin writes them from OpenCode's API (`memoria_hook_client.opencode_transcript`: OpenCode keeps
  its sessions in a database of its own).

No config file of OpenCode's is edited. The plugin file is Memoria's alone (its first line says
so): a second install with the same settings changes nothing, uninstall removes it, with the
`plugins` folder and the config folder when they are left empty; a `memoria.js` that is not
Memoria's is refused and left as it is.
"""

from __future__ import annotations

import json
import os
import shlex
from importlib.resources import files
from pathlib import Path
from typing import Literal

from app.hooks.agent_install import AgentConfigError, AgentInstaller, InstallReport, InstallRequest
from app.hooks.install import command_hook

Scope = Literal["user", "project"]

AGENT = "opencode"
PLUGIN_NAME = "memoria.js"
PLUGIN_FOLDER = "plugins"
PROJECT_FOLDER = ".opencode"
#: Milliseconds the plugin gives the hook client before it kills it: the client's own budget
#: (1.5 s) plus slack for a cold start, as for the agents whose hooks take a timeout.
TIMEOUT_MS = 3000
SUBCOMMANDS = ("session-start", "user-prompt-submit", "capture")
_PLACEHOLDER = '"__MEMORIA_CONFIG__"'
#: The template's first line, which marks a plugin file as Memoria's.
MARKER = "// Memoria's plugin for OpenCode: written by `memoria hook install --agent opencode`"
#: The event each subcommand stands for (Claude Code's; the plugin runs the first two from
#: `chat.message`) or runs on (OpenCode's).
EVENTS = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "capture": "session.idle",
}


class OpenCodeConfigError(AgentConfigError):
    """The plugin file cannot be written or removed (or is someone else's); it was left as it is."""


def config_folder() -> Path:
    """OpenCode's user config folder: `$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`."""
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".config"
    return base / "opencode"


def plugin_path(request: InstallRequest) -> Path:
    """`plugins/memoria.js` in `--config-dir`, else in the scope's OpenCode folder."""
    if request.config_dir is not None:
        folder = request.config_dir
    elif request.scope == "project":
        folder = request.project_dir / PROJECT_FOLDER
    else:
        folder = config_folder()
    return folder / PLUGIN_FOLDER / PLUGIN_NAME


def planned(request: InstallRequest) -> list[str]:
    """The hook client's subcommands the plugin runs (`--no-session-start`, `--no-recall` drop one)."""
    wanted = {
        "session-start": request.session_start,
        "user-prompt-submit": request.recall,
        "capture": request.capture,
    }
    return [sub for sub in SUBCOMMANDS if wanted[sub]]


def plugin_source(url: str, namespace: str | None, subcommands: list[str]) -> str:
    """The plugin file: the template with the hook client's command for each subcommand to run."""
    return rendered({sub: command_argv(url, namespace, sub) for sub in subcommands})


def rendered(commands: dict[str, list[str]], timeout_ms: int = TIMEOUT_MS) -> str:
    """The template with `commands` (subcommand -> argv) and the time the plugin gives each."""
    config = json.dumps({"commands": commands, "timeoutMs": timeout_ms}, ensure_ascii=False)
    template = files("app.hooks").joinpath("opencode_plugin.js").read_text(encoding="utf-8")
    return template.replace(_PLACEHOLDER, config, 1)


def command_argv(url: str, namespace: str | None, sub: str) -> list[str]:
    """The hook client's argv for `sub`, as every agent's command hook runs it."""
    return shlex.split(command_hook(url, namespace, sub, agent=AGENT)["command"])


def _ours(text: str) -> bool:
    return text.startswith(MARKER)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise OpenCodeConfigError(f"cannot read {path}: {exc}") from exc


def install(path: Path, source: str) -> bool:
    """True when the file changed (False: this exact plugin was already there)."""
    current = _read(path)
    if current == source:
        return False
    if current is not None and not _ours(current):
        raise OpenCodeConfigError(f"{path} is not Memoria's plugin; left as it is")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        staged = path.with_name(f".{PLUGIN_NAME}.tmp")
        staged.write_text(source, encoding="utf-8")
        staged.replace(path)
    except OSError as exc:
        raise OpenCodeConfigError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return True


def uninstall(path: Path) -> bool:
    """True when Memoria's plugin was removed; its folder goes when left empty, and the folder
    holding that (OpenCode's config folder, a project's `.opencode`) likewise."""
    current = _read(path)
    if current is None:
        return False
    if not _ours(current):
        raise OpenCodeConfigError(f"{path} is not Memoria's plugin; left as it is")
    path.unlink()
    for folder in (path.parent, path.parent.parent):
        try:
            folder.rmdir()
        except OSError:  # not empty: someone else's files are there
            break
    return True


def install_plugin(request: InstallRequest) -> InstallReport:
    """`memoria hook install --agent opencode`."""
    path = plugin_path(request)
    subcommands = planned(request)
    changed = install(path, plugin_source(request.url, request.namespace, subcommands))
    events = [EVENTS[sub] for sub in subcommands]
    return InstallReport(changed=[path] if changed else [], events=events)


def uninstall_plugin(request: InstallRequest) -> InstallReport:
    """`memoria hook uninstall --agent opencode`."""
    path = plugin_path(request)
    return InstallReport(changed=[path] if uninstall(path) else [])


def installed_plugin(config_dir: Path | None) -> tuple[Path, list[str]]:
    """For `memoria status`: the user's plugin file (or the one in `config_dir`) and what it runs."""
    folder = config_dir if config_dir is not None else config_folder()
    path = folder / PLUGIN_FOLDER / PLUGIN_NAME
    current = _read(path)
    if current is None or not _ours(current):
        return path, []
    return path, [EVENTS[sub] for sub in SUBCOMMANDS if f'"{sub}":' in current]


OPENCODE = AgentInstaller(
    name=AGENT,
    label="OpenCode",
    executable="opencode",
    install=install_plugin,
    uninstall=uninstall_plugin,
    installed=installed_plugin,
)
