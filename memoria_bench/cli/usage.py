"""`memoria bench usage`: many scripted Claude Code sessions through the installed hooks, and what
reached the model (`memoria_bench.usage`)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from app.cli import config
from memoria_bench.cli.common import JSON_OPTION, on_scratch_database


@click.command("usage")
@click.option(
    "--scenario",
    "scenario_files",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A scenario file (repeatable). Default: the dev scenarios in memoria_bench/usage/scenarios/.",
)
@click.option(
    "--hook-budget",
    type=click.FloatRange(min=0.1),
    help="MEMORIA_CLIENT__HOOK_BUDGET_S for the replayed hooks (default: theirs).",
)
@click.option(
    "--calls",
    "calls_out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write every SessionStart and UserPromptSubmit call and what it injected (JSON lines).",
)
@JSON_OPTION
@click.option("--check", is_flag=True, help="Exit 1 when a target is missed.")
def usage(
    scenario_files: tuple[Path, ...],
    hook_budget: float | None,
    calls_out: Path | None,
    json_out: Path | None,
    check: bool,
) -> None:
    """Replay scenarios of many Claude Code sessions through the installed hooks against a real
    `memoria serve`, then print what reached the model: answers injected, stale versions injected
    unmarked, noise share, context characters per prompt, unrelated prompts left alone, memories
    injected twice into one session, and the automatic supersede links' precision."""
    from memoria_bench.usage import (
        SCENARIOS_DIR,
        ScenarioError,
        UsageOptions,
        bench_usage,
        load_scenario,
        print_report,
    )

    files = scenario_files or tuple(sorted(SCENARIOS_DIR.glob("*.json")))
    if not files:
        raise click.UsageError(f"no scenario given and none in {SCENARIOS_DIR}")
    try:
        scenarios = [load_scenario(path) for path in files]
    except ScenarioError as exc:
        raise click.ClickException(str(exc)) from exc
    names = [scenario.name for scenario in scenarios]
    if len(set(names)) != len(names):
        raise click.UsageError(f"two scenarios share a name: {', '.join(names)}")
    config.settings()  # a bad setting is one line here, not a server that fails to start
    if calls_out is not None:
        calls_out.write_text("")
    options = UsageOptions(scenarios=scenarios, hook_budget_s=hook_budget, calls_out=calls_out)
    report = on_scratch_database(
        lambda url: bench_usage(url, options, Console(stderr=True)), print_report, json_out, "-".join(names)
    )
    if check and not all(target["met"] for target in report["targets"]):
        raise SystemExit(1)
