"""Merge the Memoria `UserPromptSubmit` hook into a Claude Code settings file, and take it out again.

Settings files are shared with everything else a person configures, so the merge is surgical:
only hook entries that point at Memoria are touched, every other key, event, group and hook is
kept in order, and a second install changes nothing. The API key is never written into a settings
file: http hooks name `$MEMORIA_CLIENT__API_KEY` (resolved by Claude Code via `allowedEnvVars`),
command hooks read it from that variable or the user-only-readable key file.

Where the hook recalls from is decided on the person's machine, never by the server from a path:
the command hook works it out per prompt from the session's directory; an http hook cannot (Claude
Code posts the event as it is), so a project install writes the project's namespace, computed here
from its git root, into the hook URL, and a user-scope http install names none and gets the
server's default namespace.
"""

from __future__ import annotations

import copy
import shlex
import sys
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from app.client.environment import DEFAULT_URL, ENV_API_KEY
from app.client.json_file import JsonFileError, read_object, render_like, write_atomically
from app.client.namespace import namespace_for_cwd
from app.hooks.command import HOOK_PATH

Scope = Literal["user", "project", "local"]
Mode = Literal["http", "command"]

EVENT = "UserPromptSubmit"
#: Seconds Claude Code waits: the server's budget (0.3 s) or the script's (1.5 s) plus slack.
HTTP_TIMEOUT_S = 2
COMMAND_TIMEOUT_S = 3
_COMMAND_MARKERS = ("memoria-hook", "app.hooks.command", "hook user-prompt-submit")
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "memoria-hook"


SettingsFileError = JsonFileError
"""The settings file cannot be read or is not a JSON object; it was left as it is."""


def settings_path(scope: Scope, project_dir: Path) -> Path:
    if scope == "user":
        return Path.home() / ".claude" / "settings.json"
    name = "settings.json" if scope == "project" else "settings.local.json"
    return project_dir / ".claude" / name


def project_namespace(
    project_dir: Path, mapping: dict[str, str] | None = None, default: str | None = None
) -> str | None:
    """The namespace of `project_dir` as the command hook would compute it for a session started
    there (mapped prefix, git root, default), for a project-scope http hook's URL."""
    return namespace_for_cwd(str(project_dir.expanduser().absolute()), mapping, default)


def hook_url(url: str, namespace: str | None) -> str:
    """The hook endpoint under `url`, naming `namespace` in the query when there is one."""
    target = url.rstrip("/") + HOOK_PATH
    return target + "?namespace=" + quote(namespace, safe="") if namespace else target


def http_hook(url: str, namespace: str | None) -> dict[str, Any]:
    return {
        "type": "http",
        "url": hook_url(url, namespace),
        "headers": {"Authorization": f"Bearer ${ENV_API_KEY}"},
        "allowedEnvVars": [ENV_API_KEY],
        "timeout": HTTP_TIMEOUT_S,
    }


def command_hook(url: str, namespace: str | None) -> dict[str, Any]:
    """Run by the checkout's launcher under `python -S` (fast start) when there is a checkout."""
    if SCRIPT.is_file():
        argv = [sys.executable, "-S", str(SCRIPT)]
    else:
        argv = [sys.executable, "-m", "app.hooks.command"]
    argv.append("user-prompt-submit")
    if url.rstrip("/") != DEFAULT_URL:
        argv += ["--url", url]
    if namespace:
        argv += ["--namespace", namespace]
    return {"type": "command", "command": shlex.join(argv), "timeout": COMMAND_TIMEOUT_S}


def is_memoria_hook(hook: Any) -> bool:
    if not isinstance(hook, dict):
        return False
    if hook.get("type") == "http":
        return HOOK_PATH in str(hook.get("url", ""))
    if hook.get("type") == "command":
        return any(marker in str(hook.get("command", "")) for marker in _COMMAND_MARKERS)
    return False


def without_memoria(settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` minus Memoria's hooks; groups, the event and `hooks` go only if we emptied them."""
    result = copy.deepcopy(settings)
    hooks = result.get("hooks")
    if not isinstance(hooks, dict) or not isinstance(hooks.get(EVENT), list):
        return result
    groups = []
    for group in hooks[EVENT]:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            kept = [h for h in group["hooks"] if not is_memoria_hook(h)]
            if not kept and len(kept) != len(group["hooks"]):
                continue
            group = {**group, "hooks": kept}
        groups.append(group)
    if groups or not hooks[EVENT]:
        hooks[EVENT] = groups
    else:
        del hooks[EVENT]
        if not hooks:
            del result["hooks"]
    return result


def with_memoria(settings: dict[str, Any], hook: dict[str, Any]) -> dict[str, Any]:
    result = without_memoria(settings)
    hooks = result.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsFileError('"hooks" is not an object')
    groups = hooks.setdefault(EVENT, [])
    if not isinstance(groups, list):
        raise SettingsFileError(f'"hooks.{EVENT}" is not a list')
    groups.append({"hooks": [hook]})
    return result


def install(path: Path, hook: dict[str, Any]) -> bool:
    """True when the file changed (False: this exact hook was already installed)."""
    current, original = read_object(path)
    updated = with_memoria(current, hook)
    if updated == current:
        return False
    write_atomically(path, render_like(updated, original))
    return True


def uninstall(path: Path) -> bool:
    """True when a Memoria hook was removed."""
    if not path.exists():
        return False
    current, original = read_object(path)
    updated = without_memoria(current)
    if updated == current:
        return False
    write_atomically(path, render_like(updated, original))
    return True
