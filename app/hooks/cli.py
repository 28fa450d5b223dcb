"""`memoria hook …`: run the command hook, and install or remove the hook in Claude Code settings."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import cast, get_args

import click

from app.client.config import load_settings
from app.hooks import install as setup
from app.hooks.command import ENV_API_KEY
from app.hooks.command import main as run_command_hook

_SCOPES = get_args(setup.Scope)
_MODES = get_args(setup.Mode)


@click.group()
def hook() -> None:
    """Auto-recall before every Claude Code prompt (UserPromptSubmit hook)."""


@hook.command(
    "user-prompt-submit",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []},
)
@click.pass_context
def user_prompt_submit(ctx: click.Context) -> None:
    """The command hook: event JSON on stdin, answer on stdout; always exits 0 (fails open).

    Same code as scripts/memoria-hook, which starts faster; accepts --url and --namespace.
    """
    code = run_command_hook(["user-prompt-submit", *ctx.args])
    sys.stdout.flush()
    # Skip interpreter teardown (torch and friends take ~0.2 s to unload): the answer is out,
    # the log is closed, and every millisecond here delays the person's prompt.
    os._exit(code)


def _target(scope: str, project_dir: Path | None, settings_file: Path | None) -> Path:
    if settings_file is not None:
        return settings_file
    return setup.settings_path(cast(setup.Scope, scope), project_dir or Path.cwd())


_scope_option = click.option(
    "--scope",
    type=click.Choice(_SCOPES),
    default="user",
    show_default=True,
    help="user: ~/.claude/settings.json; project: .claude/settings.json (shared); "
    "local: .claude/settings.local.json (yours, not committed).",
)
_project_option = click.option(
    "--project-dir", type=click.Path(file_okay=False, path_type=Path), help="Project root (default: cwd)."
)
_file_option = click.option(
    "--settings-file", type=click.Path(dir_okay=False, path_type=Path), help="Edit this file instead."
)


@hook.command("install")
@_scope_option
@click.option("--mode", type=click.Choice(_MODES), default="http", show_default=True)
@click.option("--url", help="Memoria base URL (default: MEMORIA_CLIENT__URL or http://127.0.0.1:8080).")
@click.option("--namespace", help="Always recall from this namespace instead of the repository's.")
@_project_option
@_file_option
def hook_install(
    scope: str,
    mode: str,
    url: str | None,
    namespace: str | None,
    project_dir: Path | None,
    settings_file: Path | None,
) -> None:
    """Add the Memoria hook to a Claude Code settings file (idempotent; other settings kept)."""
    base = url or load_settings().client.url
    entry = setup.http_hook(base, namespace) if mode == "http" else setup.command_hook(base, namespace)
    path = _target(scope, project_dir, settings_file)
    try:
        changed = setup.install(path, entry)
    except setup.SettingsFileError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"{'installed' if changed else 'already installed'}: {mode} hook in {path}", err=True)
    if mode == "http":
        note = f"Claude Code fills the Bearer header from ${ENV_API_KEY}: start it with that variable set"
        if not os.environ.get(ENV_API_KEY):
            note += " (it is not set in this shell)"
        click.echo(note + ".", err=True)
    else:
        click.echo(
            f"The hook reads the key from ${ENV_API_KEY} or the key file (see `memoria login`).", err=True
        )
        if scope == "project" and settings_file is None:
            click.echo(
                "Note: the command names this machine's Python; --scope local keeps it out of git.", err=True
            )


@hook.command("uninstall")
@_scope_option
@_project_option
@_file_option
def hook_uninstall(scope: str, project_dir: Path | None, settings_file: Path | None) -> None:
    """Remove Memoria's hooks from a Claude Code settings file (everything else is kept)."""
    path = _target(scope, project_dir, settings_file)
    try:
        removed = setup.uninstall(path)
    except setup.SettingsFileError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(
        f"{'removed the' if removed else 'no'} Memoria hook {'from' if removed else 'in'} {path}", err=True
    )
