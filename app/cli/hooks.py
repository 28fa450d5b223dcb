"""`memoria hook …`: the command hooks; install or remove them in Claude Code settings. The logic
lives in `app.hooks` (the installer) and `memoria_hook_client` (the hooks themselves); `memoria bench
hook`, what the hook adds to each prompt, is in `memoria_bench`.

The console script sends `memoria hook <user-prompt-submit|session-start|capture|flush>` to
`memoria_hook_client.command` before this package is even imported (`app.entry`); the click
commands of the same names here serve `python -m app.cli` and `memoria hook --help`, and show the
same help text.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import cast, get_args

import click

from app.cli.config import settings
from app.cli.hook_agents import agent_option, agents_named, all_done, config_dir_option, run_installer
from app.client.api import api_key
from app.client.settings import ClientSettings
from app.hooks import install as setup
from app.hooks import installers
from app.hooks.agent_install import InstallRequest
from app.hooks.key_check import excess_scopes_warning, key_grant
from memoria_hook_client.command import HELP, SUBCOMMANDS
from memoria_hook_client.command import main as run_command_hook
from memoria_hook_client.environment import ENV_API_KEY
from memoria_hook_client.namespace import git_root

_SHORT_HELP = {
    "user-prompt-submit": "The UserPromptSubmit hook: recall for the prompt on stdin.",
    "session-start": "The SessionStart hook: the project's key memories for a new session.",
    "capture": "The Stop / PreCompact / SessionEnd hook: spool the session's new exchanges.",
    "flush": "Send the spooled captures to Memoria.",
}
_SCOPES = get_args(setup.Scope)
_MODES = get_args(setup.Mode)


@click.group()
def hook() -> None:
    """Coding agents' hooks (Claude Code, Codex CLI): context at SessionStart, recall per prompt,
    capture at Stop."""


def _hook_subcommand(sub: str) -> click.Command:
    """`memoria hook <sub>`: the fail-open hook itself, with its own --help."""

    # No click options on purpose: a bad argument must still exit 0 (Claude Code blocks the prompt
    # on exit 2), so the hook parses them and logs what it refused; --help is the hook's too. Nor
    # are the settings loaded: like the script, the hook reads its variables itself, so an
    # unrelated bad setting cannot fail the prompt either.
    @click.command(
        sub,
        help=HELP[sub],
        short_help=_SHORT_HELP[sub],
        add_help_option=False,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    )
    @click.pass_context
    def run(ctx: click.Context) -> None:
        code = run_command_hook([sub, *ctx.args])
        sys.stdout.flush()
        # Skip interpreter teardown (unloading torch and friends is slow): the answer is out,
        # the log is closed, and every millisecond here delays the person's prompt.
        os._exit(code)

    return run


for _sub in SUBCOMMANDS:
    hook.add_command(_hook_subcommand(_sub))


def _project(project_dir: Path | None) -> Path:
    """`--project-dir`, else the git repository around the cwd (where Claude Code keeps a project's
    `.claude`, and where `memoria status` looks), else the cwd."""
    if project_dir is not None:
        return project_dir
    return Path(git_root(os.getcwd()) or os.getcwd())


def _target(scope: str, project_dir: Path | None, settings_file: Path | None) -> Path:
    if settings_file is not None:
        return settings_file
    return setup.settings_path(cast(setup.Scope, scope), _project(project_dir))


_scope_option = click.option(
    "--scope",
    type=click.Choice(_SCOPES),
    default="user",
    show_default=True,
    help="user: ~/.claude/settings.json; project: .claude/settings.json (shared); "
    "local: .claude/settings.local.json (yours, not committed).",
)
_project_option = click.option(
    "--project-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Project root (default: the git repository around the cwd, else the cwd).",
)
_file_option = click.option(
    "--settings-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Edit this file instead (Claude Code).",
)


@hook.command("install")
@_scope_option
@click.option(
    "--mode",
    type=click.Choice(_MODES),
    default="command",
    show_default=True,
    help="How the UserPromptSubmit hook runs. command: on this machine, finds the namespace per prompt "
    "from the git repository, reads the key file, and stays silent when the server is down; http: no "
    "process per prompt, but needs MEMORIA_CLIENT__API_KEY in Claude Code's environment and shows "
    "connection errors while the server is stopped. The other hooks are always commands.",
)
@click.option(
    "--session-start/--no-session-start",
    default=True,
    help="SessionStart: the namespace's pinned and most important memories when a session starts.",
)
@click.option("--recall/--no-recall", default=True, help="UserPromptSubmit: recall for every prompt.")
@click.option(
    "--capture/--no-capture",
    default=True,
    help="Stop, PreCompact, SessionEnd: store each exchange as an episode, no LLM involved.",
)
@click.option(
    "--async-stop/--sync-stop",
    default=False,
    show_default=True,
    help="Run the Stop capture hook async. Claude Code kills an async Stop hook when a `claude -p` "
    "session ends, and then skips SessionEnd: that session's last exchanges are not captured.",
)
@click.option("--url", help="Memoria base URL (default: MEMORIA_CLIENT__URL or http://127.0.0.1:8080).")
@click.option(
    "--namespace",
    help="Always use this namespace. Default: command hooks work it out per event from the session's "
    "git repository; project http installs write the project's into the URL; user http installs use "
    "the server's default namespace.",
)
@_project_option
@_file_option
@agent_option
@config_dir_option
def hook_install(
    scope: str,
    mode: str,
    session_start: bool,
    recall: bool,
    capture: bool,
    async_stop: bool,
    url: str | None,
    namespace: str | None,
    project_dir: Path | None,
    settings_file: Path | None,
    agent: str,
    config_dir: Path | None,
) -> None:
    """Add Memoria's hooks to a coding agent's settings (idempotent; other settings kept).

    Claude Code (the default): SessionStart, UserPromptSubmit, and capture on Stop, PreCompact and
    SessionEnd, each switchable; a hook you switch off is taken out if an earlier install added it.
    Codex CLI (`--agent codex`): SessionStart, UserPromptSubmit and capture on Stop, with Codex's
    trust entries, in $CODEX_HOME/config.toml. Gemini CLI (`--agent gemini`): SessionStart, BeforeAgent
    and capture on AfterAgent, PreCompress and SessionEnd, in ~/.gemini/settings.json (or the
    project's .gemini/settings.json). Qwen Code (`--agent qwen`): SessionStart, UserPromptSubmit and
    capture on Stop, PreCompact and SessionEnd, in ~/.qwen/settings.json (or the project's
    .qwen/settings.json). OpenCode (`--agent opencode`): a plugin file,
    ~/.config/opencode/plugins/memoria.js (or the project's .opencode/plugins/memoria.js), recalling
    for every prompt and capturing when a session goes idle. GitHub Copilot CLI (`--agent copilot`):
    sessionStart, userPromptSubmitted and
    capture on agentStop, in ~/.copilot/hooks/memoria.json (or the
    project's .github/hooks/memoria.json). `--agent all`: every agent whose command is on PATH, one
    line each; fails (after trying them all) when one of them failed.
    """
    if not (session_start or recall or capture):
        raise click.UsageError(
            "nothing to install: every hook is switched off (see `memoria hook uninstall`)"
        )
    client = settings().client
    base = url or client.url
    names = agents_named(agent)
    done: list[bool] = []
    for name in names:
        if name == installers.CLAUDE_CODE:
            continue
        if mode != "command":
            raise click.UsageError(f"--mode {mode} is Claude Code's; {name} runs command hooks only")
        request = InstallRequest(
            scope="project" if scope == "project" else "user",
            project_dir=_project(project_dir),
            url=base,
            namespace=namespace,
            session_start=session_start,
            recall=recall,
            capture=capture,
            config_dir=config_dir,
        )
        done.append(run_installer(name, request, remove=False, one_of_all=agent == installers.ALL))
    if installers.CLAUDE_CODE not in names:
        _warn_about_key_scopes(base, client, capture)
        all_done(done)
        return
    http = mode == "http" and recall
    if http:
        _refuse_http_without_key()
    http_namespace = namespace
    if http and namespace is None and scope != "user":
        http_namespace = _project_namespace(_project(project_dir), client)
    plan = setup.planned_hooks(
        base,
        namespace,
        cast(setup.Mode, mode),
        http_namespace=http_namespace,
        session_start=session_start,
        recall=recall,
        capture=capture,
        async_stop=async_stop,
    )
    path = _target(scope, project_dir, settings_file)
    try:
        changed = setup.install(path, plan)
    except setup.SettingsFileError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"{'installed' if changed else 'already installed'} in {path}:", err=True)
    for event, entry in plan.items():
        click.echo(f"  {event:<17} {setup.describe(entry)}", err=True)
    skipped = [name for name, on in (("SessionStart", session_start), ("UserPromptSubmit", recall)) if not on]
    skipped += [] if capture else list(setup.CAPTURE_EVENTS)
    if skipped:
        click.echo(f"  (not installed: {', '.join(skipped)})", err=True)
    if http and http_namespace is None:
        click.echo(
            "The http hook names no namespace: the server's default (MEMORIA_HOOKS__DEFAULT_NAMESPACE) "
            "serves every project. For each repository's own memories use --mode command or a project "
            "install.",
            err=True,
        )
    _warn_about_key_scopes(base, client, capture)
    if http:
        click.echo(
            f"The http hook reads the key from ${ENV_API_KEY} only (not the key file): start Claude Code "
            "with it set. While the server is stopped Claude Code shows a connection error on every "
            "prompt; --mode command stays silent.",
            err=True,
        )
        for warning in setup.http_warnings(base, os.environ):
            click.echo(f"warning: {warning}", err=True)
    if mode == "command" or session_start or capture:
        click.echo(
            f"The command hooks read the key from ${ENV_API_KEY} or the key file (see `memoria login`).",
            err=True,
        )
        if scope == "project" and settings_file is None:
            click.echo(
                "Note: the commands name this machine's Python; --scope local keeps them out of git.",
                err=True,
            )
    all_done(done)


def _refuse_http_without_key() -> None:
    """The http hook sends `Bearer $MEMORIA_CLIENT__API_KEY` and nothing else: with the key only in
    the key file (`memoria login`) every prompt would be refused, so say so before installing."""
    if os.environ.get(ENV_API_KEY, "").strip():
        return
    raise click.ClickException(
        f"--mode http needs {ENV_API_KEY} set, in this shell and in the one that starts Claude Code: "
        "the http hook cannot read the key file that `memoria login` writes, so every prompt would get "
        "401. Set the variable and run this again, or use --mode command (the default), which reads "
        "the key file."
    )


def _project_namespace(project_dir: Path, client: ClientSettings) -> str | None:
    """The project's namespace, computed on this machine now, for the http hook's URL."""
    namespace = setup.project_namespace(project_dir, client.namespace_map, client.default_namespace)
    if namespace is not None:
        click.echo(f"The http hook recalls from namespace {namespace} (this project's).", err=True)
    return namespace


def _warn_about_key_scopes(url: str, client: ClientSettings, capture: bool) -> None:
    """Warn when the hooks' key can do more than they need (read; write too for capture), or less
    (capture without write is refused by the server); quiet when the key cannot be checked."""
    try:
        key = api_key(client)
    except click.ClickException:
        return
    grant = key_grant(url, key)
    if grant is None:
        return
    if not capture:
        warning = excess_scopes_warning(grant.scopes, grant.user)
        if warning:
            click.echo(warning, err=True)
        return
    scopes = set(grant.scopes)
    who = grant.user or "USER"
    if "write" not in scopes:
        click.echo(
            "warning: the hooks' key cannot write, so the server will refuse every capture: "
            f"`memoria keys create --user {who} --scope read --scope write`, or install with --no-capture.",
            err=True,
        )
    extra = sorted(scopes - {"read", "write"})
    if extra:
        click.echo(
            f"warning: the hooks' key can also {', '.join(extra)}; they only need read and write. "
            f"A narrower key limits what a leaked one can do: "
            f"`memoria keys create --user {who} --scope read --scope write`.",
            err=True,
        )


@hook.command("uninstall")
@_scope_option
@_project_option
@_file_option
@agent_option
@config_dir_option
def hook_uninstall(
    scope: str, project_dir: Path | None, settings_file: Path | None, agent: str, config_dir: Path | None
) -> None:
    """Remove Memoria's hooks from a coding agent's settings (everything else is kept)."""
    names = agents_named(agent)
    done: list[bool] = []
    for name in names:
        if name != installers.CLAUDE_CODE:
            request = InstallRequest(
                scope="project" if scope == "project" else "user",
                project_dir=_project(project_dir),
                url="",
                config_dir=config_dir,
            )
            done.append(run_installer(name, request, remove=True, one_of_all=agent == installers.ALL))
    if installers.CLAUDE_CODE not in names:
        all_done(done)
        return
    path = _target(scope, project_dir, settings_file)
    try:
        removed = setup.uninstall(path)
    except setup.SettingsFileError as exc:
        raise click.ClickException(str(exc)) from exc
    gone = " (it held nothing else, so it is gone)" if removed and not path.exists() else ""
    click.echo(
        f"{'removed the' if removed else 'no'} Memoria hooks {'from' if removed else 'in'} {path}{gone}",
        err=True,
    )
    all_done(done)
