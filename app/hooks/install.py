"""Merge Memoria's Claude Code hooks into a settings file, and take them out again.

One install sets up every hook Memoria has, each switchable: SessionStart (the project's most
important memories when a session starts), UserPromptSubmit (recall for each prompt; a command
hook by default, an http hook on request) and capture on Stop, PreCompact and SessionEnd.
SessionStart and the capture hooks are always command hooks: Claude Code runs no http hooks on
SessionStart. Stop is synchronous unless asked (`async_stop`): measured with Claude Code 2.1 in
`claude -p`, an async Stop hook is killed when the session ends and SessionEnd then never runs, so
the last exchanges were lost; the capture hook only spools and hands the sending to a detached
process, so a reply waits for it only briefly (`memoria bench capture` measures it).

Settings files are shared with everything else a person configures, so the merge is surgical:
only hooks that are exactly Memoria's are touched (a command is ours when its parsed argv runs
our launcher, `-m memoria_hook_client.command` (or its old path, `-m app.hooks.command`) or
`memoria hook <sub>`; an http hook when its URL's path is one of our hook routes, so a person's
own `my-memoria-hook-wrapper.sh` is never taken for ours),
every other key, event, group and hook keeps its place and its exact text (`render_edit`), a
second install changes nothing, and an install then an uninstall gives the file back byte for
byte. A settings file that holds nothing but `{}` after an uninstall is removed (with its
`.claude` directory when that is left empty): an install into a project without one created it.

The API key is never written into a settings file: http hooks name `$MEMORIA_CLIENT__API_KEY`
(resolved by Claude Code via `allowedEnvVars`), command hooks read it from that variable or the
user-only-readable key file.

Where the hooks read and write is decided on the person's machine, never by the server from a
path: command hooks work it out per event from the session's directory; an http hook cannot
(Claude Code posts the event as it is), so a project install writes the project's namespace,
computed here from its git root, into the hook URL, and a user-scope http install names none and
gets the server's default namespace.
"""

from __future__ import annotations

import contextlib
import copy
import ipaddress
import os
import re
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote, urlsplit

from app.client.json_file import JsonFileError, read_object, render_edit, write_atomically
from memoria_hook_client.agents import DEFAULT_AGENT
from memoria_hook_client.command import HOOK_PATH, ROUTES, SUBCOMMANDS
from memoria_hook_client.environment import DEFAULT_URL, ENV_API_KEY
from memoria_hook_client.namespace import namespace_for_cwd

Scope = Literal["user", "project", "local"]
Mode = Literal["http", "command"]

SESSION_START = "SessionStart"
EVENT = "UserPromptSubmit"
CAPTURE_EVENTS = ("Stop", "PreCompact", "SessionEnd")
#: Every event Memoria installs a hook on, in the order a session meets them.
EVENTS = (SESSION_START, EVENT, *CAPTURE_EVENTS)
#: Seconds Claude Code waits: the server's budget (0.3 s) or the script's (1.5 s) plus slack.
HTTP_TIMEOUT_S = 2
COMMAND_TIMEOUT_S = 3
#: The capture hook spools and hands the sending to a detached process; this bounds a slow disk.
CAPTURE_TIMEOUT_S = 10
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "memoria-hook"
_HTTP_PATHS = frozenset(ROUTES.values())
#: `-m` modules that run the command hook: the client package's, and the path it had inside `app`
#: before it became its own package, so an install or uninstall replaces hooks written back then.
HOOK_MODULES = ("memoria_hook_client.command", "app.hooks.command")
_PYTHON = re.compile(r"python(\d+(\.\d+)?)?")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
#: Interpreter options that take a value as the next argument.
_PYTHON_VALUE_OPTIONS = ("-X", "-W", "-c")


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


def command_hook(
    url: str,
    namespace: str | None,
    sub: str = "user-prompt-submit",
    *,
    run_async: bool = False,
    agent: str = DEFAULT_AGENT,
) -> dict[str, Any]:
    """Run by the checkout's launcher under `python -S` (fast start) when there is a checkout; an
    agent other than Claude Code is named (`--agent`), so the client reads that agent's payload."""
    if SCRIPT.is_file():
        argv = [sys.executable, "-S", str(SCRIPT)]
    else:
        argv = [sys.executable, "-m", "memoria_hook_client.command"]
    argv.append(sub)
    if url.rstrip("/") != DEFAULT_URL:
        argv += ["--url", url]
    if namespace:
        argv += ["--namespace", namespace]
    if agent != DEFAULT_AGENT:
        argv += ["--agent", agent]
    timeout = CAPTURE_TIMEOUT_S if sub == "capture" else COMMAND_TIMEOUT_S
    hook: dict[str, Any] = {"type": "command", "command": shlex.join(argv), "timeout": timeout}
    if run_async:
        hook["async"] = True
    return hook


def planned_hooks(
    url: str,
    namespace: str | None,
    mode: Mode = "command",
    *,
    http_namespace: str | None = None,
    session_start: bool = True,
    recall: bool = True,
    capture: bool = True,
    async_stop: bool = False,
) -> dict[str, dict[str, Any]]:
    """Memoria's hook for each event to install: `namespace` pins the command hooks' namespace
    (None: per event, from its cwd), `http_namespace` goes into an http hook's URL."""
    plan: dict[str, dict[str, Any]] = {}
    if session_start:
        plan[SESSION_START] = command_hook(url, namespace, "session-start")
    if recall:
        plan[EVENT] = http_hook(url, http_namespace) if mode == "http" else command_hook(url, namespace)
    if capture:
        for event in CAPTURE_EVENTS:
            plan[event] = command_hook(url, namespace, "capture", run_async=async_stop and event == "Stop")
    return plan


def _ours_after_launcher(args: Sequence[str]) -> bool:
    """What follows our launcher: nothing (the default subcommand), one of ours, or an option."""
    return not args or args[0] in SUBCOMMANDS or args[0].startswith("--")


def is_memoria_command(command: str) -> bool:
    """Whether `command` runs Memoria's hook: judged on its parsed argv, never on a substring, so
    `~/bin/my-memoria-hook-wrapper.sh` stays the person's."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return False
    while argv and _ASSIGNMENT.match(argv[0]):  # `VAR=value python ...`
        argv.pop(0)
    if not argv:
        return False
    program, args = os.path.basename(argv[0]), argv[1:]
    if program == "memoria-hook":
        return _ours_after_launcher(args)
    if program == "memoria":
        return len(args) >= 2 and args[0] == "hook" and args[1] in SUBCOMMANDS
    if not _PYTHON.fullmatch(program):
        return False
    at = 0
    while at < len(args) and args[at].startswith("-") and args[at] != "-m":
        if args[at] == "-c":
            return False
        at += 2 if args[at] in _PYTHON_VALUE_OPTIONS else 1
    if at >= len(args):
        return False
    if args[at] == "-m":
        module, rest = (args[at + 1], args[at + 2 :]) if at + 1 < len(args) else ("", [])
        if module in HOOK_MODULES:
            return _ours_after_launcher(rest)
        return module == "app.cli" and len(rest) >= 2 and rest[0] == "hook" and rest[1] in SUBCOMMANDS
    return os.path.basename(args[at]) == "memoria-hook" and _ours_after_launcher(args[at + 1 :])


def is_memoria_hook(hook: Any) -> bool:
    if not isinstance(hook, dict):
        return False
    if hook.get("type") == "http":
        try:
            return urlsplit(str(hook.get("url", ""))).path in _HTTP_PATHS
        except ValueError:
            return False
    if hook.get("type") == "command":
        return is_memoria_command(str(hook.get("command", "")))
    return False


def _memoria_hooks_in(groups: Any) -> list[dict[str, Any]]:
    if not isinstance(groups, list):
        return []
    return [
        hook
        for group in groups
        if isinstance(group, dict) and isinstance(group.get("hooks"), list)
        for hook in group["hooks"]
        if is_memoria_hook(hook)
    ]


def installed(settings: Mapping[str, Any], events: Sequence[str] = EVENTS) -> dict[str, list[dict[str, Any]]]:
    """Memoria's hooks in `settings`, per event of `events` (events without any left out)."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return {}
    found = {event: _memoria_hooks_in(hooks.get(event)) for event in events}
    return {event: entries for event, entries in found.items() if entries}


def _without_ours(groups: list[Any]) -> list[Any]:
    """`groups` minus Memoria's hooks; a group goes only when we emptied it."""
    kept_groups = []
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            kept = [h for h in group["hooks"] if not is_memoria_hook(h)]
            if not kept and group["hooks"]:
                continue
            group = {**group, "hooks": kept}
        kept_groups.append(group)
    return kept_groups


def without_memoria(settings: dict[str, Any], events: Sequence[str] = EVENTS) -> dict[str, Any]:
    """`settings` minus Memoria's hooks on `events` (Claude Code's, unless another agent's that
    shares the file shape); groups, events and `hooks` go only if we emptied them."""
    result = copy.deepcopy(settings)
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result
    emptied = False
    for event in events:
        groups = hooks.get(event)
        if not isinstance(groups, list) or not _memoria_hooks_in(groups):
            continue
        kept = _without_ours(groups)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
            emptied = True
    if emptied and not hooks:
        del result["hooks"]
    return result


def with_memoria(
    settings: dict[str, Any], plan: Mapping[str, dict[str, Any]], events: Sequence[str] = EVENTS
) -> dict[str, Any]:
    """`settings` with exactly `plan`'s hooks as Memoria's on `events`: an event already holding
    just the planned hook is left as it is (no reordering), others lose ours and get the planned one."""
    result = copy.deepcopy(settings)
    hooks = result.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsFileError('"hooks" is not an object')
    for event in events:
        groups = hooks.get(event)
        if groups is not None and not isinstance(groups, list):
            raise SettingsFileError(f'"hooks.{event}" is not a list')
        wanted = plan.get(event)
        ours = _memoria_hooks_in(groups)
        if wanted is not None and ours == [wanted]:
            continue
        if ours:
            kept = _without_ours(groups or [])
            if kept or wanted is not None:
                hooks[event] = kept
            else:
                del hooks[event]
        if wanted is not None:
            hooks.setdefault(event, []).append({"hooks": [wanted]})
    if not hooks and "hooks" not in settings:
        del result["hooks"]
    return result


def install(
    path: Path, plan: Mapping[str, dict[str, Any]] | dict[str, Any], events: Sequence[str] = EVENTS
) -> bool:
    """True when the file changed (False: these exact hooks were already installed). `plan` maps
    events to hooks; a single hook is the UserPromptSubmit one."""
    if "type" in plan:
        plan = {EVENT: dict(plan)}
    current, original = read_object(path)
    updated = with_memoria(current, plan, events)
    if updated == current:
        return False
    write_atomically(path, render_edit(updated, original))
    return True


def uninstall(path: Path, events: Sequence[str] = EVENTS, folder: str = ".claude") -> bool:
    """True when a Memoria hook was removed. A file left holding `{}` is removed, and so is its
    directory (`folder`) when nothing else is in it: what an install into a fresh project created."""
    if not path.exists():
        return False
    current, original = read_object(path)
    updated = without_memoria(current, events)
    if updated == current:
        return False
    if updated:
        write_atomically(path, render_edit(updated, original))
        return True
    path.unlink()
    if path.parent.name == folder:
        with contextlib.suppress(OSError):  # not empty: other files of the agent's or the person's
            path.parent.rmdir()
    return True


def read_installed(path: Path) -> dict[str, list[dict[str, Any]]] | None:
    """Memoria's hooks in the settings file at `path` per event; None when it cannot be read."""
    try:
        settings, _ = read_object(path)
    except JsonFileError:
        return None
    return installed(settings)


def describe(hook: Mapping[str, Any]) -> str:
    """`command`, `command, async` or `http` for one of our hooks, as `memoria status` shows it."""
    kind = str(hook.get("type", "?"))
    return kind + (", async" if hook.get("async") else "")


def http_warnings(url: str, env: Mapping[str, str]) -> list[str]:
    """What will stop Claude Code's http hook from reaching `url`, judged here at install time:
    it sends http hooks through HTTP(S)_PROXY unless NO_PROXY covers the host, and it refuses
    private-range addresses other than loopback."""
    warnings: list[str] = []
    host = (urlsplit(url).hostname or "").lower()
    proxy = next(
        (
            name
            for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")
            if env.get(name, "").strip()
        ),
        None,
    )
    if proxy is not None and not _no_proxy_covers(host, env.get("NO_PROXY") or env.get("no_proxy") or ""):
        warnings.append(
            f"{proxy} is set and NO_PROXY does not name {host}: Claude Code sends the http hook "
            f"through the proxy, which cannot reach it. Add {host} to NO_PROXY or use --mode command."
        )
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return warnings
    if address.is_private and not address.is_loopback:
        warnings.append(
            f"{host} is a private-range address: Claude Code refuses http hooks to those (loopback "
            "excepted). Use --mode command, or a loopback or public address."
        )
    return warnings


def _no_proxy_covers(host: str, no_proxy: str) -> bool:
    for entry in (part.strip().lower() for part in no_proxy.split(",")):
        if not entry:
            continue
        if entry == "*":
            return True
        entry = entry.split(":")[0] if entry.count(":") == 1 else entry
        domain = entry.lstrip(".").lstrip("*").lstrip(".")
        if host == domain or host.endswith("." + domain):
            return True
    return False
