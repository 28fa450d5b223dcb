"""`memoria hook install --agent codex`: Memoria's hooks in Codex CLI's `config.toml`, trusted.

Codex reads hooks from `hooks.json` or from `[hooks]` tables in `config.toml`, with Claude Code's
event names and answer shape (SessionStart, UserPromptSubmit, Stop; `hookSpecificOutput`), a
`timeout` in seconds, and runs a hook only when the user's `config.toml` holds its trust entry,
`[hooks.state."<file>:<event>:<group>:<handler>"] trusted_hash = "sha256:…"`, whose hash matches the
hook as it is now (`codex exec` has no review screen: an untrusted hook is skipped without a word).
So the install writes both, into the one file Codex reads them from, `$CODEX_HOME/config.toml`
(default `~/.codex/config.toml`): the hooks and their trust entries, as one block of Memoria's at
the end of the file (`app.client.toml_block`: the person's text keeps its bytes, uninstall gives
the file back byte for byte). A block that would not parse with the person's file (they wrote
`hooks.SessionStart = [...]` inline, say) is refused before anything is written.

The trust hash is Codex's own recipe (`codex-rs/hooks/src/engine/discovery.rs`, `command_hook_hash`):
SHA-256 over the sorted-key compact JSON of the hook's normalised identity, the event's snake-case
label and the matcher group holding that one handler, with unset fields left out.

Codex's hooks run on this machine and only in user scope here: the namespace is worked out per
event from the session's directory, as Claude Code's command hooks do, so one install serves every
repository. `--scope project` is refused (a project's `.codex` layer is read only for projects
Codex trusts, and its trust entries would still belong in the user's file).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
from app.hooks.agent_install import AgentConfigError, AgentInstaller, InstallReport, InstallRequest
from app.hooks.install import CAPTURE_TIMEOUT_S, COMMAND_TIMEOUT_S, command_hook

AGENT = "codex"
MARKERS = Markers(
    begin="# >>> memoria hooks: `memoria hook uninstall --agent codex` removes this block",
    end="# <<< memoria hooks",
)
#: Codex's event -> (the hook client's subcommand, its trust-key label, the hook's timeout in s).
EVENTS = {
    "SessionStart": ("session-start", "session_start", COMMAND_TIMEOUT_S),
    "UserPromptSubmit": ("user-prompt-submit", "user_prompt_submit", COMMAND_TIMEOUT_S),
    "Stop": ("capture", "stop", CAPTURE_TIMEOUT_S),
}


class CodexConfigError(AgentConfigError):
    """Codex's config file cannot take the hooks (`TomlBlockError`'s reasons, or a scope Codex's hooks
    are not installed in); it was left as it is."""


@dataclass(frozen=True, slots=True)
class CodexHook:
    event: str
    command: str
    timeout: int


def config_path(request: InstallRequest) -> Path:
    return config_file(request.config_dir)


def planned(request: InstallRequest) -> list[CodexHook]:
    """The hooks to install, one per event switched on."""
    wanted = {
        "SessionStart": request.session_start,
        "UserPromptSubmit": request.recall,
        "Stop": request.capture,
    }
    hooks = []
    for event, (sub, _, timeout) in EVENTS.items():
        if wanted[event]:
            command = command_hook(request.url, request.namespace, sub, agent=AGENT)["command"]
            hooks.append(CodexHook(event, command, timeout))
    return hooks


def trust_hash(event: str, hook: CodexHook) -> str:
    """Codex's `trusted_hash` of `hook` on `event` (no matcher, no status message, not async)."""
    identity = {
        "event_name": EVENTS[event][1],
        "hooks": [{"type": "command", "command": hook.command, "timeout": hook.timeout, "async": False}],
    }
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _toml_string(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's; non-ASCII stays as it is)."""
    return json.dumps(value, ensure_ascii=False)


def render_block(path: Path, existing: dict[str, Any], hooks: list[CodexHook]) -> str:
    """The block's body for `hooks` in the file at `path`, whose own content parses to `existing`:
    each hook is a new matcher group after the file's own groups of its event, and its trust key
    names that position."""
    groups = existing.get("hooks", {}) if isinstance(existing.get("hooks"), dict) else {}
    lines: list[str] = []
    for hook in hooks:
        index = len(groups.get(hook.event, [])) if isinstance(groups.get(hook.event), list) else 0
        key = f"{path}:{EVENTS[hook.event][1]}:{index}:0"
        lines += [
            "",
            f"[[hooks.{hook.event}]]",
            f"[[hooks.{hook.event}.hooks]]",
            'type = "command"',
            f"command = {_toml_string(hook.command)}",
            f"timeout = {hook.timeout}",
            "",
            f"[hooks.state.{_toml_string(key)}]",
            f"trusted_hash = {_toml_string(trust_hash(hook.event, hook))}",
        ]
    return "\n".join(lines)


def install(request: InstallRequest) -> InstallReport:
    if request.scope != "user":
        raise CodexConfigError("Codex hooks install in user scope only (`--scope user`)")
    path = config_path(request)
    hooks = planned(request)
    try:
        original = read_text(path)
        base = without_block(original or "", MARKERS)
        updated = with_block(base, render_block(path, parsed(base, path), hooks), MARKERS, path)
    except TomlBlockError as exc:
        raise CodexConfigError(str(exc)) from exc
    changed = write_or_remove(path, original, updated)
    return InstallReport(changed=[path] if changed else [], events=[hook.event for hook in hooks])


def uninstall(request: InstallRequest) -> InstallReport:
    path = config_path(request)
    try:
        original = read_text(path)
    except TomlBlockError as exc:
        raise CodexConfigError(str(exc)) from exc
    if original is None:
        return InstallReport()
    changed = write_or_remove(path, original, without_block(original, MARKERS))
    return InstallReport(changed=[path] if changed else [])


def installed(config_dir: Path | None) -> tuple[Path, list[str]]:
    """(Codex's config file, the events Memoria's block installs hooks on), for `memoria status`."""
    path = config_file(config_dir)
    try:
        text = read_text(path) or ""
        hooks = parsed(_block_text(text), path).get("hooks", {})
    except TomlBlockError as exc:
        raise CodexConfigError(str(exc)) from exc
    return path, [event for event in EVENTS if event in hooks]


def _block_text(text: str) -> str:
    """The TOML inside Memoria's block of `text` ("" when there is none)."""
    found = MARKERS.pattern().search(text)
    return found.group(0) if found else ""


CODEX = AgentInstaller(
    name=AGENT,
    label="Codex CLI",
    executable="codex",
    install=install,
    uninstall=uninstall,
    installed=installed,
)
