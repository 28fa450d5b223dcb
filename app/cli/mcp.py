"""`memoria mcp install|uninstall`: Claude Code's configuration for Memoria's MCP tools (the logic
lives in `app.mcp.install`)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import cast, get_args

import click
from rich.markup import escape

from app.cli.config import settings
from app.client.render import console
from app.mcp import install as setup
from app.mcp.installers import MCP_INSTALLERS, McpConfigError, McpRequest
from memoria_hook_client.environment import ENV_API_KEY

_SCOPES = get_args(setup.Scope)


@click.group()
def mcp() -> None:
    """Memoria's memory tools in a coding agent (the /mcp endpoint)."""


_scope_option = click.option(
    "--scope",
    type=click.Choice(_SCOPES),
    default="local",
    show_default=True,
    help="local: ~/.claude.json, this project only (yours); project: .mcp.json (committed, shared); "
    "user: ~/.claude.json, every project.",
)
_project_option = click.option(
    "--project-dir", type=click.Path(file_okay=False, path_type=Path), help="Project root (default: cwd)."
)
_file_option = click.option(
    "--config-file", type=click.Path(dir_okay=False, path_type=Path), help="Edit this file instead."
)


CLAUDE_CODE = "claude-code"
CLAUDE_EXECUTABLE = "claude"
ALL = "all"

_agent_option = click.option(
    "--agent",
    type=click.Choice([CLAUDE_CODE, *MCP_INSTALLERS, ALL]),
    default=CLAUDE_CODE,
    show_default=True,
    help="The coding agent whose configuration to edit (codex: $CODEX_HOME/config.toml, user scope; "
    "gemini: ~/.gemini/settings.json, or the project's .gemini/settings.json with --scope project; "
    "qwen: likewise ~/.qwen/settings.json; "
    "opencode: ~/.config/opencode/opencode.json, or the project's opencode.json with --scope project; "
    "copilot: $COPILOT_HOME/mcp-config.json, else ~/.copilot/mcp-config.json, user scope; "
    "cursor: ~/.cursor/mcp.json, or the project's .cursor/mcp.json with --scope project); "
    "all: every one whose command is on PATH.",
)
_config_dir_option = click.option(
    "--config-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Codex: the config folder to edit instead of $CODEX_HOME (else ~/.codex); Gemini CLI, Qwen Code: "
    "the folder whose settings.json to edit; OpenCode: the folder whose opencode.json to edit; "
    "GitHub Copilot CLI: the folder whose mcp-config.json to edit; "
    "Cursor: the folder whose mcp.json to edit.",
)


def _agents(agent: str) -> list[str]:
    """The agents `--agent` names: one, or with `all` every one whose command is on PATH (saying
    which were skipped)."""
    if agent != ALL:
        return [agent]
    commands: dict[str, tuple[str, tuple[str, ...]]] = {CLAUDE_CODE: ("Claude Code", (CLAUDE_EXECUTABLE,))}
    commands |= {name: (each.label, each.executables) for name, each in MCP_INSTALLERS.items()}
    found = []
    for name, (label, executables) in commands.items():
        if any(shutil.which(executable) for executable in executables):
            found.append(name)
        else:
            click.echo(f"{label}: skipped: not found ({' or '.join(executables)} not on PATH)", err=True)
    if not found:
        raise click.ClickException("--agent all: no coding agent found on PATH")
    return found


def _run_agent(name: str, request: McpRequest, *, remove: bool, one_of_all: bool) -> bool:
    """Install (or remove) Memoria's server for agent `name` and say what changed. A failure ends
    the command, unless the agent is one of `--agent all`'s: then it is told and False returned."""
    writer = MCP_INSTALLERS[name]
    prefix = f"{writer.label}: " if one_of_all else ""
    try:
        report = (writer.uninstall if remove else writer.install)(request)
    except (McpConfigError, OSError) as exc:  # the file was left as it is
        if not one_of_all:
            raise click.ClickException(str(exc)) from exc
        click.echo(f"{prefix}failed: {exc}", err=True)
        return False
    if remove:
        said = f"{'removed the' if report.changed else 'no'} MCP server memoria"
        said += f" {'from' if report.changed else 'in'} {report.path}"
    else:
        done = "installed" if report.changed else "already installed"
        said = f"{done}: MCP server memoria in {report.path}"
    click.echo(prefix + said, err=True)
    for note in report.notes:
        click.echo(note, err=True)
    return True


def _scope(scope: str) -> setup.Scope:
    return cast(setup.Scope, scope)


def _where(scope: str, project_dir: Path | None, config_file: Path | None) -> tuple[Path, tuple[str, ...]]:
    project = project_dir or Path.cwd()
    chosen = _scope(scope)
    path = config_file or setup.config_path(chosen, project)
    return path, setup.servers_location(chosen, project)


@mcp.command("install")
@_scope_option
@click.option("--url", help="Memoria base URL (default: MEMORIA_CLIENT__URL or http://127.0.0.1:8080).")
@click.option(
    "--namespace",
    help="Tools default to this namespace. Default: project and local installs use the project's "
    "(MEMORIA_CLIENT__NAMESPACE_MAP, else the git repository's, see `memoria namespaces`); "
    "user installs name none.",
)
@_project_option
@_file_option
@_agent_option
@click.option(
    "--approve-tools",
    is_flag=True,
    help="Codex, Gemini CLI, Qwen Code, OpenCode: let it call Memoria's tools without asking (headless "
    "`codex exec`, `gemini -p` and `qwen -p` refuse them otherwise; OpenCode asks only when your "
    "permission rules say so). GitHub Copilot CLI keeps no such permission in a file: start it with "
    "--allow-tool=memoria.",
)
@_config_dir_option
@click.option(
    "--allow-tools",
    is_flag=True,
    help=f"Also allow every memoria tool ({setup.PERMISSION_RULE} in permissions.allow of your "
    ".claude/settings.local.json, or ~/.claude/settings.json for --scope user), so headless "
    "`claude -p` runs can use them; uninstall removes it.",
)
def mcp_install(
    scope: str,
    url: str | None,
    namespace: str | None,
    project_dir: Path | None,
    config_file: Path | None,
    agent: str,
    approve_tools: bool,
    config_dir: Path | None,
    allow_tools: bool,
) -> None:
    """Add the `memoria` MCP server to a coding agent (idempotent; other servers and keys kept).

    For Claude Code, prints a block for CLAUDE.md that tells the agent what to store and when to recall.
    `--agent all`: every agent whose command is on PATH, one after the other; fails (after trying
    them all) when one of them failed.
    """
    client = settings().client
    names = _agents(agent)
    done = [
        _run_agent(
            name,
            McpRequest(
                scope="project" if scope == "project" else "user",
                project_dir=project_dir or Path.cwd(),
                url=url or client.url,
                namespace=namespace,
                approve_tools=approve_tools,
                config_dir=config_dir,
            ),
            remove=False,
            one_of_all=agent == ALL,
        )
        for name in names
        if name != CLAUDE_CODE
    ]
    if CLAUDE_CODE in names:
        _claude_install(scope, url or client.url, namespace, project_dir, config_file, allow_tools)
    if not all(done):
        raise click.ClickException("--agent all: an agent's configuration could not be changed (see above)")


def _claude_install(
    scope: str,
    url: str,
    namespace: str | None,
    project_dir: Path | None,
    config_file: Path | None,
    allow_tools: bool,
) -> None:
    """`memoria mcp install` for Claude Code."""
    client = settings().client
    project = project_dir or Path.cwd()
    if namespace is None and scope != "user":
        namespace = setup.project_namespace(project, client.namespace_map, client.default_namespace)
    path, location = _where(scope, project_dir, config_file)
    # a committed .mcp.json cannot name a command of this machine: the key comes from the variable
    helper = setup.key_helper() if scope != "project" else None
    entry = setup.server_entry(url, namespace, helper)
    try:
        changed = setup.install(path, location, entry)
        allowed = setup.allow_tools(setup.permissions_path(_scope(scope), project)) if allow_tools else None
    except setup.ConfigFileError as exc:
        raise click.ClickException(str(exc)) from exc
    where = f"{path}" + (f" (project {location[1]})" if scope == "local" else "")
    click.echo(f"{'installed' if changed else 'already installed'}: MCP server memoria in {where}", err=True)
    if allowed is not None:
        rules = setup.permissions_path(_scope(scope), project)
        click.echo(
            f"{'allowed' if allowed else 'already allowed'}: {setup.PERMISSION_RULE} in {rules}", err=True
        )
    click.echo(
        f"Tools default to namespace {namespace}."
        if namespace
        else "Tools name no default namespace: "
        "recall and list search all of yours, stores go to `default` unless the agent names one.",
        err=True,
    )
    if helper:
        click.echo(f"Claude Code asks {helper} for the key (${ENV_API_KEY}, else the key file).", err=True)
    else:
        click.echo(
            f"Claude Code sends the key from ${ENV_API_KEY}: start it with that variable set.", err=True
        )
    helper_runs = scope == "user" or setup.workspace_trusted(project)
    problem = setup.key_problem(entry, dict(os.environ), helper_runs)
    if problem:
        click.echo(f"Warning: the memory tools are unreachable from this shell: {problem}.", err=True)
        if not helper and scope == "project":
            click.echo("  Export the variable, or install with --scope local (reads the key file).", err=True)
    if not allow_tools:
        click.echo(
            f"Headless runs (claude -p) may call the tools only once allowed: --allow-tools, "
            f"or --allowedTools {setup.PERMISSION_RULE}.",
            err=True,
        )
    if scope == "project":
        click.echo("Claude Code asks once before it uses a server from .mcp.json.", err=True)
    click.echo("\nAdd this to CLAUDE.md so the agent uses its memory:\n", err=True)
    click.echo(setup.CLAUDE_MD)


@mcp.command("uninstall")
@_scope_option
@_project_option
@_file_option
@_agent_option
@_config_dir_option
def mcp_uninstall(
    scope: str, project_dir: Path | None, config_file: Path | None, agent: str, config_dir: Path | None
) -> None:
    """Remove the `memoria` MCP server from a coding agent's configuration, and for Claude Code the
    permission rule `--allow-tools` added (everything else is kept). `--agent all`: every agent whose
    command is on PATH."""
    names = _agents(agent)
    done = [
        _run_agent(
            name,
            McpRequest(
                scope="project" if scope == "project" else "user",
                project_dir=project_dir or Path.cwd(),
                config_dir=config_dir,
            ),
            remove=True,
            one_of_all=agent == ALL,
        )
        for name in names
        if name != CLAUDE_CODE
    ]
    if CLAUDE_CODE in names:
        _claude_uninstall(scope, project_dir, config_file)
    if not all(done):
        raise click.ClickException("--agent all: an agent's configuration could not be changed (see above)")


def _claude_uninstall(scope: str, project_dir: Path | None, config_file: Path | None) -> None:
    """`memoria mcp uninstall` for Claude Code."""
    path, location = _where(scope, project_dir, config_file)
    rules = setup.permissions_path(_scope(scope), project_dir or Path.cwd())
    try:
        removed = setup.uninstall(path, location)
        disallowed = setup.disallow_tools(rules)
    except setup.ConfigFileError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(
        f"{'removed the' if removed else 'no'} MCP server memoria {'from' if removed else 'in'} {path}",
        err=True,
    )
    if disallowed:
        click.echo(f"removed {setup.PERMISSION_RULE} from {rules}", err=True)


def print_registrations(project: Path) -> None:
    """`memoria status`'s MCP part: the `memoria` server in each scope Claude Code would read for a
    session in `project`, whether its tools are allowed headless, and whether it would send a key."""
    console().print("mcp")
    env = dict(os.environ)
    for scope in _SCOPES:
        chosen = _scope(scope)
        path = setup.config_path(chosen, project)
        where = escape(str(path)) + (" (this project)" if chosen == "local" else "")
        entry = setup.installed_entry(path, setup.servers_location(chosen, project))
        if entry is None:
            console().print(f"  {scope:<8} [dim]none[/dim]  {where}")
            continue
        headers = entry.get("headers")
        named = headers.get(setup.NAMESPACE_HEADER) if isinstance(headers, dict) else None
        key = "key helper" if isinstance(entry.get("headersHelper"), str) else f"key ${ENV_API_KEY}"
        allowed = setup.tools_allowed(setup.permissions_path(chosen, project))
        console().print(
            f"  {scope:<8} {where}  {escape(str(entry.get('url')))}  "
            f"namespace {escape(str(named or 'none'))}  {key}  "
            + ("tools allowed" if allowed else "[dim]tools asked for[/dim]")
        )
        helper_runs = chosen == "user" or setup.workspace_trusted(project)
        problem = setup.key_problem(entry, env, helper_runs)
        if problem:
            console().print(f"    [red]unreachable[/red]  {escape(problem)}")
        else:
            console().print("    key reachable")
