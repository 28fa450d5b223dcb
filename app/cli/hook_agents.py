"""`memoria hook install|uninstall --agent <name>`: the agents other than Claude Code, whose config
writers `app.hooks.installers` registers (Claude Code's own flow, with its scopes and modes, stays in
`app.cli.hooks`)."""

from __future__ import annotations

from pathlib import Path

import click

from app.hooks import installers
from app.hooks.agent_install import AgentConfigError, InstallRequest

agent_option = click.option(
    "--agent",
    type=click.Choice(installers.AGENT_CHOICES),
    default=installers.CLAUDE_CODE,
    show_default=True,
    help="The coding agent whose config to edit; all: every one whose command is on PATH.",
)
config_dir_option = click.option(
    "--config-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="The agent's config folder to edit instead of its own (Codex: $CODEX_HOME, else ~/.codex; "
    "Gemini CLI: ~/.gemini, or the project's .gemini with --scope project; Qwen Code: likewise ~/.qwen; "
    "OpenCode: ~/.config/opencode, or the project's .opencode; "
    "GitHub Copilot CLI: $COPILOT_HOME, else ~/.copilot, or the project's .github with --scope project; "
    "Cursor: ~/.cursor, or the project's .cursor with --scope project).",
)


def agents_named(agent: str) -> list[str]:
    """The agents `--agent` names: one, or with `all` every one found on PATH (saying which were
    skipped)."""
    if agent != installers.ALL:
        return [agent]
    commands = {installers.CLAUDE_CODE: ("Claude Code", installers.CLAUDE_EXECUTABLE)}
    commands |= {
        name: (each.label, " or ".join(each.executables)) for name, each in installers.INSTALLERS.items()
    }
    found = installers.detected()
    if not found:
        looked_for = ", ".join(executable for _, executable in commands.values())
        raise click.ClickException(f"--agent all: no coding agent found on PATH ({looked_for})")
    for name, (label, executable) in commands.items():
        if name not in found:
            click.echo(f"{label}: skipped: not found ({executable} not on PATH)", err=True)
    return found


def run_installer(name: str, request: InstallRequest, remove: bool, one_of_all: bool = False) -> bool:
    """Install (or remove) Memoria's hooks for the agent `name`, and say what changed. A failure
    ends the command, unless the agent is one of `--agent all`'s: then it is told and False returned."""
    writer = installers.INSTALLERS[name]
    try:
        report = (writer.uninstall if remove else writer.install)(request)
    except (AgentConfigError, OSError) as exc:  # the file was left as it is
        if one_of_all:
            click.echo(f"{writer.label}: failed: {exc}", err=True)
            return False
        raise click.ClickException(f"{writer.label}: {exc}") from exc
    where = ", ".join(str(path) for path in report.changed)
    if remove:
        said = f"removed Memoria's hooks from {where}" if where else "no Memoria hooks found"
    else:
        said = f"installed in {where}" if where else "already installed"
    click.echo(f"{writer.label}: {said}", err=True)
    for event in report.events:
        click.echo(f"  {event:<17} command", err=True)
    for note in report.notes:
        click.echo(note, err=True)
    return True


def all_done(done: list[bool]) -> None:
    """Fail `--agent all` (after every agent was tried) when one of the agents failed."""
    if not all(done):
        raise click.ClickException("--agent all: an agent's configuration could not be changed (see above)")


def agents_status() -> list[str]:
    """`memoria status` lines for the agents other than Claude Code: where each keeps its hooks and
    the events Memoria's are installed on (markup-free; the caller prints them)."""
    lines = []
    for writer in installers.INSTALLERS.values():
        if writer.installed is None:
            continue
        try:
            path, events = writer.installed(None)
        except (AgentConfigError, OSError) as exc:
            lines.append(f"  {writer.name:<8} unreadable: {exc}")
            continue
        lines.append(f"  {writer.name:<8} {', '.join(events) if events else 'none'}  {path}")
    return lines
