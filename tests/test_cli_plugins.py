"""`memoria` adds commands from the `memoria.commands` entry points; the bench is one, outside the app."""

from __future__ import annotations

import tomllib
from importlib.metadata import EntryPoint

import click
import pytest
from click.testing import CliRunner

from app.cli import plugins
from app.cli.plugins import GROUP, PluginGroup
from tests.conftest import REPO_ROOT


def _group_with(monkeypatch: pytest.MonkeyPatch, *points: EntryPoint) -> click.Group:
    """A fresh `memoria`-like group with one command of its own (`own`) and `points` installed."""
    monkeypatch.setattr(plugins, "installed_plugins", lambda: list(points))

    @click.group(cls=PluginGroup)
    def group() -> None:
        pass

    @group.command("own")
    def own() -> None:
        click.echo("own ran")

    return group


def _point(name: str, value: str) -> EntryPoint:
    return EntryPoint(name=name, value=value, group=GROUP)


def test_a_plugin_that_cannot_be_imported_says_what_is_missing_and_exits_1(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    group = _group_with(monkeypatch, _point("bench", "no_such_bench_module.cli:bench"))
    result = CliRunner().invoke(group, ["bench", "latency", "--memories", "10"])
    assert result.exit_code == 1
    assert "`memoria bench` is not available" in result.output
    assert "No module named 'no_such_bench_module'" in result.output
    assert "pip install -e '.[bench]'" in result.output


def test_a_broken_plugin_leaves_the_other_commands_working(monkeypatch: pytest.MonkeyPatch) -> None:
    group = _group_with(monkeypatch, _point("bench", "no_such_bench_module.cli:bench"))
    assert CliRunner().invoke(group, ["own"]).output == "own ran\n"
    listing = CliRunner().invoke(group, ["--help"])
    assert listing.exit_code == 0
    assert "own" in listing.output and "bench" in listing.output and "not available" in listing.output


def test_an_entry_point_that_is_not_a_click_command_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    group = _group_with(monkeypatch, _point("sep", "os:sep"))
    result = CliRunner().invoke(group, ["sep"])
    assert result.exit_code == 1
    assert "os:sep is not a click command" in result.output


def test_a_plugin_never_replaces_one_of_the_apps_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    group = _group_with(monkeypatch, _point("own", "memoria_bench.cli:bench"))
    assert CliRunner().invoke(group, ["own"]).output == "own ran\n"
    CliRunner().invoke(group, ["--help"])
    assert CliRunner().invoke(group, ["own"]).output == "own ran\n"


def test_the_apps_own_commands_never_load_the_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    group = _group_with(monkeypatch)

    def refuse() -> list[EntryPoint]:
        raise AssertionError("plugins loaded for one of the app's own commands")

    monkeypatch.setattr(plugins, "installed_plugins", refuse)
    assert CliRunner().invoke(group, ["own"], catch_exceptions=False).output == "own ran\n"


def test_the_bench_entry_point_loads_the_bench_group_with_its_hook_and_report_commands(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    declared = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    value = declared["entry-points"][GROUP]["bench"]
    group = _group_with(monkeypatch, _point("bench", value))
    result = CliRunner().invoke(group, ["bench", "--help"])
    assert result.exit_code == 0, result.output
    for command in ("latency", "quality", "hook", "report"):
        assert f"  {command} " in result.output


def test_the_image_and_the_runtime_dependencies_leave_the_bench_out() -> None:
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    ignored = (REPO_ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    assert "memoria_bench" in ignored
    assert "memoria_bench" not in (REPO_ROOT / "Dockerfile").read_text(encoding="utf-8")
    runtime = " ".join(pyproject["project"]["dependencies"])
    extras = pyproject["project"]["optional-dependencies"]
    assert "aiohttp" not in runtime
    assert any(requirement.startswith("aiohttp") for requirement in extras["bench"])
    assert "memoria[bench]" in extras["dev"]
