"""`memoria hook install --agent codex`: Memoria's hooks in Codex CLI's `config.toml`, trusted.

Codex reads hooks from `hooks.json` or from `[hooks]` tables in `config.toml`, with Claude Code's
event names and answer shape (SessionStart, UserPromptSubmit, Stop; `hookSpecificOutput`), a
`timeout` in seconds, and runs a hook only when the user's `config.toml` holds its trust entry,
`[hooks.state."<file>:<event>:<group>:<handler>"] trusted_hash = "sha256:…"`, whose hash matches the
hook as it is now (`codex exec` has no review screen: an untrusted hook is skipped without a word).
So the install writes both, into the one file Codex reads them from, `$CODEX_HOME/config.toml`
(default `~/.codex/config.toml`): the hooks and their trust entries, as one block between two
marker comments appended at the end of the file. The block is all an install adds and all an
uninstall takes away, so whatever else the file holds keeps its bytes, a second install with the
same plan changes nothing, and uninstall after install gives the file back byte for byte (a file
the install created is removed). A block that would not parse with the person's file (they wrote
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
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.client.json_file import write_atomically
from app.hooks.agent_install import AgentConfigError, AgentInstaller, InstallReport, InstallRequest
from app.hooks.install import CAPTURE_TIMEOUT_S, COMMAND_TIMEOUT_S, command_hook

AGENT = "codex"
BEGIN = "# >>> memoria hooks: `memoria hook uninstall --agent codex` removes this block"
BEGIN_NEWLINE_ADDED = BEGIN + " (and the newline it added to the line above)"
END = "# <<< memoria hooks"
#: Codex's event -> (the hook client's subcommand, its trust-key label, the hook's timeout in s).
EVENTS = {
    "SessionStart": ("session-start", "session_start", COMMAND_TIMEOUT_S),
    "UserPromptSubmit": ("user-prompt-submit", "user_prompt_submit", COMMAND_TIMEOUT_S),
    "Stop": ("capture", "stop", CAPTURE_TIMEOUT_S),
}
_BLOCK = re.compile(
    "(?P<sep>\n?)(?P<begin>" + re.escape(BEGIN) + "[^\n]*)\n.*?^" + re.escape(END) + "$\n?",
    re.DOTALL | re.MULTILINE,
)


class CodexConfigError(AgentConfigError):
    """The config file cannot be read or would not parse with the hooks in it; it was left as it is."""


@dataclass(frozen=True, slots=True)
class CodexHook:
    event: str
    command: str
    timeout: int


def codex_home(env: dict[str, str] | None = None) -> Path:
    """`$CODEX_HOME` (resolved, as Codex keys its trust entries by it), else `~/.codex`."""
    configured = (os.environ if env is None else env).get("CODEX_HOME", "").strip()
    return Path(configured).resolve() if configured else Path.home() / ".codex"


def config_path(request: InstallRequest) -> Path:
    folder = request.config_dir.resolve() if request.config_dir is not None else codex_home()
    return folder / "config.toml"


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
            command = command_hook(request.url, request.namespace, sub)["command"] + f" --agent {AGENT}"
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
    """The block for `hooks` in the file at `path`, whose own content parses to `existing`: each
    hook is a new matcher group after the file's own groups of its event, and its trust key names
    that position."""
    groups = existing.get("hooks", {}) if isinstance(existing.get("hooks"), dict) else {}
    lines = [BEGIN]
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
    return "\n".join([*lines, END]) + "\n"


def _read(path: Path) -> str | None:
    try:
        with path.open(encoding="utf-8", newline="") as file:
            return file.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise CodexConfigError(f"cannot read {path}: {exc}") from exc


def without_block(text: str) -> str:
    """`text` as it was before Memoria's block was added: the block and the separator it came with
    (a blank line; and the newline it added to a last line without one) taken out."""
    found = _BLOCK.search(text)
    if found is None:
        return text
    # the newline before the block is ours unless the block starts the file; the line above's too
    # when the marker says the install added it
    ours = 2 if found.group("begin") == BEGIN_NEWLINE_ADDED else len(found.group("sep"))
    return text[: found.start("begin") - ours] + text[found.end() :]


def with_block(original: str, path: Path, hooks: list[CodexHook]) -> str:
    """`original` (without any earlier block of ours) with the block for `hooks` at its end."""
    base = without_block(original)
    try:
        existing = tomllib.loads(base)
    except tomllib.TOMLDecodeError as exc:
        raise CodexConfigError(f"{path} is not valid TOML ({exc}); it was left as it is") from exc
    block = render_block(path, existing, hooks)
    if not base:
        text = block
    elif base.endswith("\n"):
        text = base + "\n" + block
    else:
        text = base + "\n\n" + block.replace(BEGIN, BEGIN_NEWLINE_ADDED, 1)
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CodexConfigError(
            f"{path} would not parse with Memoria's hooks added ({exc}): it defines Codex hooks in a "
            "way a block appended at its end cannot extend; it was left as it is"
        ) from exc
    return text


def install(request: InstallRequest) -> InstallReport:
    if request.scope != "user":
        raise CodexConfigError("Codex hooks install in user scope only (`--scope user`)")
    path = config_path(request)
    original = _read(path)
    hooks = planned(request)
    updated = with_block(original or "", path, hooks)
    events = [hook.event for hook in hooks]
    if updated == original:
        return InstallReport(events=events)
    write_atomically(path, updated)
    return InstallReport(changed=[path], events=events)


def uninstall(request: InstallRequest) -> InstallReport:
    path = config_path(request)
    original = _read(path)
    if original is None:
        return InstallReport()
    updated = without_block(original)
    if updated == original:
        return InstallReport()
    if updated:
        write_atomically(path, updated)
    else:
        path.unlink()
    return InstallReport(changed=[path])


CODEX = AgentInstaller(
    name=AGENT, label="Codex CLI", executable="codex", install=install, uninstall=uninstall
)
