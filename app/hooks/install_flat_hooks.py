"""Memoria's hooks in a flat hooks file, `{"version": 1, "hooks": {<event>: [<hook>, ...]}}`, for any
host that reads one.

GitHub Copilot CLI (`app.hooks.install_copilot`) and Cursor (`app.hooks.install_cursor`) read hooks
from a JSON file of this shape: per event a plain list of hooks (no Claude-style groups), each hook
one command. They differ in where the file is, their event names, the keys of a hook (Copilot's
`bash` and `timeoutSec`, Cursor's `command` and `timeout`) and what to tell the person after an
install: a `FlatHooksHost` holds those, and the editing is here once (what an install request, an
uninstall and `memoria status` do with it is `app.hooks.install_hook_file`'s, shared with the
settings.json of Gemini CLI and Qwen Code).

The promises are `app.hooks.agent_install`'s: only Memoria's hooks are touched (the host judges an
entry on its parsed command, as Claude Code's installer does), a person's own hooks in the same file
keep their place and exact text, a second install changes nothing, and install then uninstall gives
the file back byte for byte. A new file gets the `version` both formats name; an existing one keeps
what it has (adding one would outlive the uninstall). A file left holding no hook but that `version`
is removed, with the folders an install may have created (the host names them) when they are left
empty.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.client.json_file import read_object, render_edit, write_atomically
from app.hooks.install_hook_file import HookFileHost, Scope

FORMAT_VERSION = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class FlatHooksHost(HookFileHost):
    """One host reading a flat hooks file: where, which events run which subcommand, the hook's shape."""

    subcommands: Mapping[str, str]
    """Per event Memoria installs on, in the order a session meets them: the hook client's
    subcommand it runs (`session-start`, `user-prompt-submit`, `capture`)."""
    hooks_file: Callable[[Scope, Path, Path | None], Path]
    """The hooks file for (scope, project folder, `--config-dir` or None)."""
    make_hook: Callable[[str, str | None, str], dict[str, Any]]
    """The host's hook for (server URL, namespace or None, subcommand)."""
    is_memoria_entry: Callable[[Any], bool]
    """Whether an entry of the file is one of Memoria's hooks."""
    created_folders: tuple[tuple[str, ...], ...]
    """From the file's folder upward, the names each folder has when an install may have created it;
    an uninstall that removes the file removes these while they are empty."""

    def path(self, scope: Scope, project_dir: Path, config_dir: Path | None = None) -> Path:
        return self.hooks_file(scope, project_dir, config_dir)

    def hook(self, url: str, namespace: str | None, sub: str) -> dict[str, Any]:
        return self.make_hook(url, namespace, sub)

    def installed(self, config: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
        """Memoria's hooks in a hooks file's object, per event (events without any left out)."""
        hooks = config.get("hooks")
        if not isinstance(hooks, dict):
            return {}
        found = {
            event: [entry for entry in hooks.get(event) or [] if self.is_memoria_entry(entry)]
            for event in self.events
            if isinstance(hooks.get(event), list)
        }
        return {event: entries for event, entries in found.items() if entries}

    def _hooks(self, config: dict[str, Any]) -> dict[str, Any]:
        """`config`'s `hooks` object (added when missing), refused when an event of ours is not a list."""
        hooks = config.setdefault("hooks", {})
        if not isinstance(hooks, dict):
            raise self.error('"hooks" is not an object')
        for event in self.events:
            if hooks.get(event) is not None and not isinstance(hooks[event], list):
                raise self.error(f'"hooks.{event}" is not a list')
        return hooks

    def with_memoria(self, config: dict[str, Any], plan: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
        """`config` with exactly `plan`'s hooks as Memoria's: an event already holding just the
        planned hook is left as it is, others lose ours and get the planned one at their end. A new
        file gets the format's `version`; an existing one keeps what it has."""
        result = copy.deepcopy(config)
        if not result:
            result["version"] = FORMAT_VERSION
        hooks = self._hooks(result)
        for event in self.events:
            wanted = plan.get(event)
            entries = hooks.get(event) or []
            ours = [entry for entry in entries if self.is_memoria_entry(entry)]
            if (wanted is not None and ours == [wanted]) or (wanted is None and not ours):
                continue
            kept = [entry for entry in entries if not self.is_memoria_entry(entry)]
            if wanted is not None:
                hooks[event] = [*kept, wanted]
            elif kept:
                hooks[event] = kept
            else:
                del hooks[event]
        return result

    def without_memoria(self, config: dict[str, Any]) -> dict[str, Any]:
        """`config` minus Memoria's hooks; an event goes only when we emptied it."""
        return self.with_memoria(config, {}) if self.installed(config) else copy.deepcopy(config)

    def install(self, path: Path, plan: Mapping[str, dict[str, Any]]) -> bool:
        """True when the file changed (False: these exact hooks were already installed)."""
        current, original = read_object(path)
        updated = self.with_memoria(current, plan)
        if updated == current:
            return False
        write_atomically(path, render_edit(updated, original))
        return True

    def uninstall(self, path: Path) -> bool:
        """True when a Memoria hook was removed; a file left holding no hook but the `version` is
        removed, with the folders an install created (`created_folders`) that are left empty."""
        if not path.exists():
            return False
        current, original = read_object(path)
        if not self.installed(current):
            return False
        updated = self.without_memoria(current)
        if updated not in ({"version": FORMAT_VERSION, "hooks": {}}, {"hooks": {}}):
            write_atomically(path, render_edit(updated, original))
            return True
        path.unlink()
        for folder, names in zip(path.parents, self.created_folders, strict=False):
            if folder.name not in names:
                break
            try:
                folder.rmdir()
            except OSError:  # not empty: the host's own files, the person's
                break
        return True
