"""`memoria status`'s part per coding agent: hooks, MCP registration, key, spool, last outcomes.

Every agent of the hook installers (`app.hooks.installers`: Claude Code, then each registered
writer) and of the MCP readers (`app.mcp.registrations`) gets one entry, so an agent added to either
registry shows up here without a change to this module. For each: the events Memoria's hooks are
installed on, the files holding its MCP server, whether the URL and key that agent would use answer
an authenticated request (`GET /v1/me`, bounded: asked only for an agent with something installed,
once per URL and key), what of its captures waits in the spool, and the last capture, recall and
session start its hooks recorded (`memoria_hook_client.state`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

import httpx
from rich.markup import escape

from app.client.render import console
from app.hooks import install as claude_code_hooks
from app.hooks import installers
from app.hooks.agent_install import AgentConfigError
from app.hooks.key_check import ME_PATH
from app.mcp.registrations import READERS, Registration, base_url
from memoria_hook_client import state as hook_state
from memoria_hook_client.environment import ENV_API_KEY, KeyFileError, key_from_environment

KEY_CHECK_TIMEOUT_S = 3.0
"""How long `memoria status` waits for each distinct URL and key to answer."""
RECORDS = ("capture", "recall", "session-start")
"""The hook outcomes shown per agent (the flush is the spool's, not an agent's)."""


def agent_names() -> list[str]:
    """Every agent of the installers' and the MCP readers' registries, Claude Code first."""
    names = [installers.CLAUDE_CODE, *installers.INSTALLERS]
    return names + [name for name in READERS if name not in names]


def hook_events(name: str, project: Path) -> tuple[list[str], list[str]]:
    """(the events Memoria's hooks are installed on, problems reading the agent's config)."""
    if name == installers.CLAUDE_CODE:
        events: list[str] = []
        problems = []
        for scope in ("user", "project", "local"):
            path = claude_code_hooks.settings_path(scope, project)
            found = claude_code_hooks.read_installed(path)
            if found is None:
                problems.append(f"{path} unreadable")
            events += [event for event in found or {} if event not in events]
        return events, problems
    writer = installers.INSTALLERS.get(name)
    if writer is None or writer.installed is None:
        return [], []
    try:
        return list(writer.installed(None)[1]), []
    except (AgentConfigError, OSError) as exc:
        return [], [str(exc)]


def check_key(url: str, key: str) -> dict[str, str]:
    """{"outcome": ok | refused | http-<status> | unreachable, "detail"}: whether `url` answers an
    authenticated `GET /v1/me` with `key` within `KEY_CHECK_TIMEOUT_S`."""
    try:
        response = httpx.get(
            url.rstrip("/") + ME_PATH, headers={"Authorization": f"Bearer {key}"}, timeout=KEY_CHECK_TIMEOUT_S
        )
    except httpx.HTTPError as exc:
        return {"outcome": "unreachable", "detail": f"cannot reach {url}: {exc or type(exc).__name__}"}
    if response.status_code == 200:
        return {"outcome": "ok", "detail": f"{url} accepts the key"}
    if response.status_code in (401, 403):
        return {"outcome": "refused", "detail": f"{url} refused the key ({response.status_code})"}
    return {"outcome": f"http-{response.status_code}", "detail": f"{url} answered {response.status_code}"}


class KeyChecks:
    """Key checks of one `memoria status` run, each distinct URL and key asked once."""

    def __init__(self, env: Mapping[str, str], default_url: str) -> None:
        self.env = env
        self.default_url = default_url
        self.done: dict[tuple[str, str], dict[str, str]] = {}

    def for_agent(self, registrations: list[Registration]) -> dict[str, str]:
        """The check of the URL the agent's MCP entry names (else the client's) and the key it would
        send: the variable alone when every entry of it reads no key file, else variable or key file."""
        urls = [base_url(entry.url) for entry in registrations if entry.url]
        url = urls[0] if urls else self.default_url
        env_only = bool(registrations) and all(entry.key_from_env_only for entry in registrations)
        key = self.env.get(ENV_API_KEY, "").strip()
        if not key and env_only:
            return {
                "outcome": "no-key",
                "url": url,
                "detail": f"{ENV_API_KEY} is not set, and this agent reads no key file",
            }
        if not key:
            try:
                key = key_from_environment(self.env)
            except KeyFileError as exc:
                return {"outcome": "no-key", "url": url, "detail": str(exc)}
        if (url, key) not in self.done:
            self.done[url, key] = check_key(url, key)
        return {**self.done[url, key], "url": url}


def host_report(project: Path, env: Mapping[str, str], default_url: str) -> list[dict[str, Any]]:
    """One entry per agent (see the module's docstring), ready for `--json`."""
    status = hook_state.read_status(env)
    spooled = hook_state.spool_by_agent(env, installers.CLAUDE_CODE)
    checks = KeyChecks(env, default_url)
    report = []
    for name in agent_names():
        events, problems = hook_events(name, project)
        reader = READERS.get(name)
        registrations = reader(project) if reader else []
        own = hook_state.agent_records(status, name)
        report.append(
            {
                "agent": name,
                "hooks": events,
                "hook_problems": problems,
                "mcp": [{**asdict(entry), "file": str(entry.file)} for entry in registrations],
                "mcp_install": reader is not None,
                "key": checks.for_agent(registrations) if events or registrations else None,
                "spool": spooled.get(name, {"batches": 0, "exchanges": 0, "bytes": 0}),
                "last": {what: own.get(what) for what in RECORDS},
            }
        )
    return report


def print_hosts(report: list[dict[str, Any]]) -> None:
    """The per-agent part of `memoria status`, as text."""
    console().print("agents")
    for host in report:
        if _unused(host):
            console().print(f"  {escape(host['agent']):<12} [dim]nothing installed, nothing recorded[/dim]")
            continue
        hooks = ", ".join(host["hooks"]) or "[dim]none[/dim]"
        if host["mcp"]:
            mcp = ", ".join(f"{entry['scope']} {escape(entry['file'])}" for entry in host["mcp"])
        else:
            mcp = "[dim]none[/dim]" if host["mcp_install"] else "[dim]no MCP install yet[/dim]"
        console().print(f"  {escape(host['agent'])}")
        console().print(f"    hooks     {hooks}")
        for problem in host["hook_problems"]:
            console().print(f"      [red]unreadable[/red]  {escape(problem)}")
        console().print(f"    mcp       {mcp}")
        key = host["key"]
        if key is None:
            console().print("    key       [dim]not checked (nothing installed)[/dim]")
        else:
            colour = "green" if key["outcome"] == "ok" else "red"
            console().print(f"    key       [{colour}]{key['outcome']}[/{colour}]  {escape(key['detail'])}")
        spool = host["spool"]
        if spool["exchanges"]:
            console().print(
                f"    spooled   [yellow]{spool['exchanges']} exchanges ({spool['bytes']} bytes) "
                "waiting[/yellow]"
            )
        else:
            console().print("    spooled   nothing")
        for what, record in host["last"].items():
            label = f"last {'session' if what == 'session-start' else what}"
            console().print(f"    {label:<13} {escape(describe_record(record))}")


def _unused(host: dict[str, Any]) -> bool:
    """No hooks, no MCP entry, nothing spooled, no outcome recorded: one line says it."""
    recorded = any(record is not None for record in host["last"].values())
    installed = host["hooks"] or host["hook_problems"] or host["mcp"]
    return not installed and not recorded and not host["spool"]["exchanges"]


def describe_record(record: Any) -> str:
    """`<at>  <outcome>  count <n>  namespace <ns>` of a status record, `never` without one."""
    if not isinstance(record, dict):
        return "never"
    namespace = record.get("namespace") or "server default"
    return f"{record.get('at')}  {record.get('outcome')}  count {record.get('count')}  namespace {namespace}"


def client_env(state_dir: Path | None) -> dict[str, str]:
    """This process's environment, with the settings' state directory when one is configured."""
    env = dict(os.environ)
    if state_dir is not None:
        env[hook_state.ENV_STATE_DIR] = str(state_dir)
    return env
