"""`memoria hook …` (run the command hook; install or remove it in Claude Code settings) and
`memoria bench hook` (what the hook adds to each prompt). The logic lives in `app.hooks`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import cast, get_args

import click
from rich.console import Console
from rich.table import Table

from app.cli.config import settings
from app.client.api import api_key
from app.client.environment import ENV_API_KEY
from app.client.namespace import namespace_for_cwd
from app.client.settings import ClientSettings
from app.hooks import install as setup
from app.hooks.bench import COLUMNS, BenchFailed, bench_hook_latency
from app.hooks.command import main as run_command_hook
from app.hooks.key_check import excess_scopes_warning, key_grant

_SCOPES = get_args(setup.Scope)
_MODES = get_args(setup.Mode)


@click.group()
def hook() -> None:
    """Auto-recall before every Claude Code prompt (UserPromptSubmit hook)."""


@hook.command(
    "user-prompt-submit",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    options_metavar="[--url URL] [--namespace NAME]",
)
@click.pass_context
def user_prompt_submit(ctx: click.Context) -> None:
    """The command hook: event JSON on stdin, answer on stdout; always exits 0 (fails open).

    \b
    --url URL         Memoria base URL (default: MEMORIA_CLIENT__URL or http://127.0.0.1:8080).
    --namespace NAME  Recall from this namespace instead of the repository's.

    The namespace is worked out here, from the event's cwd: MEMORIA_CLIENT__NAMESPACE_MAP, else the
    git repository (repo:<name>), else MEMORIA_CLIENT__DEFAULT_NAMESPACE, else the server's default.

    Same code as scripts/memoria-hook, which starts faster. Reads MEMORIA_CLIENT__URL,
    MEMORIA_CLIENT__API_KEY (else the key file), MEMORIA_CLIENT__HOOK_BUDGET_S and
    MEMORIA_CLIENT__HOOK_LOG; why it stayed silent goes to that log.
    """
    # Only --help is click's. The other arguments are not click options on purpose: a bad one must
    # still exit 0 (Claude Code blocks the prompt on exit 2), so the hook parses them and logs what
    # it refused. Nor are the settings loaded: like the script, the hook reads its variables
    # itself, so an unrelated bad setting cannot fail the prompt either.
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
@click.option(
    "--mode",
    type=click.Choice(_MODES),
    default="command",
    show_default=True,
    help="command: runs on this machine, finds the namespace per prompt from the git repository, reads "
    "the key file, and stays silent when the server is down; http: no process per prompt, but Claude "
    "Code shows connection errors while the server is stopped.",
)
@click.option("--url", help="Memoria base URL (default: MEMORIA_CLIENT__URL or http://127.0.0.1:8080).")
@click.option(
    "--namespace",
    help="Always recall from this namespace. Default: command hooks work it out per prompt from the "
    "session's git repository; project http installs write the project's into the URL; user http "
    "installs use the server's default namespace.",
)
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
    client = settings().client
    base = url or client.url
    if mode == "http" and namespace is None and scope != "user":
        namespace = _project_namespace(project_dir or Path.cwd(), client)
    entry = setup.http_hook(base, namespace) if mode == "http" else setup.command_hook(base, namespace)
    path = _target(scope, project_dir, settings_file)
    try:
        changed = setup.install(path, entry)
    except setup.SettingsFileError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"{'installed' if changed else 'already installed'}: {mode} hook in {path}", err=True)
    if mode == "http" and namespace is None:
        click.echo(
            "The hook names no namespace: the server's default (MEMORIA_HOOKS__DEFAULT_NAMESPACE) serves "
            "every project. For each repository's own memories use --mode command or a project install.",
            err=True,
        )
    _warn_about_key_scopes(base, client)
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


def _project_namespace(project_dir: Path, client: ClientSettings) -> str | None:
    """The project's namespace, computed on this machine now, for the http hook's URL."""
    namespace = setup.project_namespace(project_dir, client.namespace_map, client.default_namespace)
    if namespace is not None:
        click.echo(f"The hook recalls from namespace {namespace} (this project's).", err=True)
    return namespace


def _warn_about_key_scopes(url: str, client: ClientSettings) -> None:
    """Warn when the key the hook will use can do more than read (quiet when it cannot be checked)."""
    try:
        key = api_key(client)
    except click.ClickException:
        return
    grant = key_grant(url, key)
    warning = excess_scopes_warning(grant.scopes, grant.user) if grant else None
    if warning:
        click.echo(warning, err=True)


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


@click.command("hook")
@click.option("--url", help="Server base URL (default: MEMORIA_CLIENT__URL).")
@click.option("--key", help="API key (default: MEMORIA_CLIENT__API_KEY or the key file).")
@click.option("--namespace", help="Recall from this namespace (default: the one of --cwd, worked out here).")
@click.option("--cwd", default=os.getcwd, show_default="current directory", help="The session's directory.")
@click.option("--runs", type=click.IntRange(2, 10_000), default=30, show_default=True)
@click.option("--warmup", type=click.IntRange(0, 100), default=3, show_default=True)
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), help="Also write JSON.")
def bench_hook(
    url: str | None,
    key: str | None,
    namespace: str | None,
    cwd: str,
    runs: int,
    warmup: int,
    json_out: Path | None,
) -> None:
    """p50/p95 of the hook endpoint and of the command hook process, server up and down."""
    client = settings().client
    url = (url or client.url).rstrip("/")
    namespace = namespace or namespace_for_cwd(cwd, client.namespace_map, client.default_namespace)
    try:
        rows = bench_hook_latency(url, key or api_key(client), cwd, namespace, runs, warmup)
    except BenchFailed as exc:
        raise click.ClickException(str(exc)) from exc
    table = Table(title=f"memoria bench hook: {url}")
    for column in COLUMNS:
        table.add_column(column, justify="left" if column in ("measure", "note") else "right")
    for row in rows:
        table.add_row(*(str(row[column]) for column in COLUMNS))
    Console().print(table)
    sys.stdout.flush()
    if json_out is not None:
        json_out.write_text(json.dumps(rows, indent=2) + "\n")
        click.echo(f"wrote {json_out}", err=True)
