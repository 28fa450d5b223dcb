"""Commands that live outside the app, added to `memoria` through the `memoria.commands` entry points.

The benchmarks (`memoria bench …`) are their own package, `memoria_bench`, which imports the app and
is never imported by it: a distribution declares `[project.entry-points."memoria.commands"]` with a
click command, and `memoria` adds it here. The production image leaves the bench out while its
metadata still names it, so a plugin that cannot be loaded must not take the other commands down:
it becomes a stand-in of the same name that says what is missing and exits 1. They are loaded the
first time a name that is not the app's own is looked up, or the commands are listed (`--help`), so
`memoria serve` never imports them, and a plugin importing `app.cli` is no import cycle.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib.metadata import EntryPoint, entry_points
from typing import Any

import click

#: The entry-point group `memoria` reads its extra commands from.
GROUP = "memoria.commands"

# The bench needs its extra's dependencies, and the production image leaves the package out.
_INSTALL_HINT = (
    "install it with its dependencies: pip install 'memoria[bench]' (a checkout: pip install -e '.[bench]')"
)


class PluginGroup(click.Group):
    """A click group that adds the `memoria.commands` plugins the first time it needs them; a
    plugin named like one of the group's own commands is left out (the app's command wins)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._plugins_added = False

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            self._add_plugins()
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._add_plugins()
        return super().list_commands(ctx)

    def _add_plugins(self) -> None:
        if self._plugins_added:
            return
        self._plugins_added = True
        for command in plugin_commands(installed_plugins()):
            if command.name not in self.commands:
                self.add_command(command)


def installed_plugins() -> list[EntryPoint]:
    """The `memoria.commands` entry points of every installed distribution, by name."""
    return sorted(entry_points(group=GROUP), key=lambda point: point.name)


def plugin_commands(points: Iterable[EntryPoint]) -> list[click.Command]:
    """A click command for each entry point: the plugin's own, or a stand-in explaining why not."""
    commands: list[click.Command] = []
    for point in points:
        try:
            loaded = point.load()
        except Exception as exc:  # any import error of a plugin is reported, never raised
            commands.append(_unavailable(point, f"{type(exc).__name__}: {exc}"))
            continue
        if not isinstance(loaded, click.Command):
            commands.append(_unavailable(point, f"{point.value} is not a click command"))
            continue
        if loaded.name != point.name:
            loaded.name = point.name
        commands.append(loaded)
    return commands


def _unavailable(point: EntryPoint, reason: str) -> click.Command:
    """A command named like the plugin that accepts anything and fails with `reason` (and the fix)."""
    message = f"`memoria {point.name}` is not available: {reason} ({point.value}); {_INSTALL_HINT}"

    def fail() -> None:
        raise click.ClickException(message)

    return click.Command(
        point.name,
        callback=fail,
        help=message,
        short_help=f"(not available: {reason})",
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
        add_help_option=False,
    )
