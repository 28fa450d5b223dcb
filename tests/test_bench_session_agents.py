"""`memoria bench session`'s recipes for the agents' CLIs (`memoria_bench.session.agents`), without
running a CLI: every host Memoria installs hooks for has one, and the OpenCode and Copilot CLI
recipes (the ones the real-CLI tests share with the bench) point their CLI at the fake the bench
starts, never at a provider the person's environment names; and a CLI starts in the project as a
shell there would start it."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import httpx
import pytest

from app.hooks.hosts import HOSTS
from memoria_bench.session.agents import REPLY, SESSION_CLIS
from memoria_bench.session.run import _command

#: A person's own variables a CLI would otherwise read: the recipes must leave none of them.
PERSONS_ENV = {
    "PATH": "/usr/bin",
    "GITHUB_TOKEN": "ghp_the-persons-own",
    "GH_TOKEN": "ghp_the-persons-own",
    "COPILOT_MODEL": "the-persons-model",
    "COPILOT_PROVIDER_BASE_URL": "https://api.example.com/v1",
    "OPENAI_API_KEY": "sk-the-persons-own",
    "OPENCODE_CONFIG": "/home/person/opencode.json",
    "XDG_CONFIG_HOME": "/home/person/.config",
}
MODEL_URL = "http://127.0.0.1:9/v1"


#: Hosts whose CLI cannot be installed on this machine, so there is no session to time: Cursor's
#: is not on npm and its installer's host is unreachable (docs/agents/cursor.md).
NOT_INSTALLABLE = {"cursor"}


def test_the_session_bench_has_a_recipe_for_every_host_memoria_installs_hooks_for() -> None:
    assert set(SESSION_CLIS) == set(HOSTS) - NOT_INSTALLABLE


@pytest.mark.parametrize("agent", ["opencode", "copilot"])
def test_the_fake_a_recipe_starts_answers_the_reply_at_the_url_its_cli_is_given(agent: str) -> None:
    fake, url = SESSION_CLIS[agent].start_fake()
    try:
        # OpenAI-compatible clients append /chat/completions to the base URL they are given
        answered = httpx.post(f"{url}/chat/completions", json={"model": "m", "messages": []}, timeout=10)
    finally:
        fake.stop()
    assert answered.status_code == 200, answered.text
    assert answered.json()["choices"][0]["message"]["content"] == REPLY


def test_the_opencode_recipe_names_the_fake_as_the_persons_model_and_drops_their_opencode_variables(
    tmp_path: Path,
) -> None:
    cli = SESSION_CLIS["opencode"]
    cli.write_settings(tmp_path, MODEL_URL)
    config = json.loads((tmp_path / ".config" / "opencode" / "opencode.json").read_text())
    provider, model = config["model"].split("/")
    assert config["provider"][provider]["options"]["baseURL"] == MODEL_URL
    assert model in config["provider"][provider]["models"]
    env = cli.environment(PERSONS_ENV, tmp_path, "/opt/opencode/node_modules/.bin/opencode", MODEL_URL)
    assert env["HOME"] == str(tmp_path)
    assert not {"OPENCODE_CONFIG", "OPENAI_API_KEY", "XDG_CONFIG_HOME"} & set(env)
    assert cli.argv("/bin/opencode", "a prompt") == ["/bin/opencode", "run", "a prompt"]


def _installed_opencode(root: Path, with_config_dependencies: bool) -> str:
    """An npm prefix laid out as `.ci/agent-cli.sh opencode` leaves it: the binary's link under
    `node_modules/.bin`, and (when asked) the config folder's dependencies in `config-deps/`."""
    binary = root / "node_modules" / ".bin" / "opencode"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n")
    if with_config_dependencies:
        deps = root / "config-deps"
        (deps / "node_modules" / "@opencode-ai" / "plugin").mkdir(parents=True)
        (deps / "package.json").write_text('{"dependencies": {"@opencode-ai/plugin": "1.18.33"}}\n')
        (deps / "package-lock.json").write_text("{}\n")
    return str(binary)


def test_an_opencode_home_is_given_the_config_folder_opencode_installs_at_its_first_start(
    tmp_path: Path,
) -> None:
    binary = _installed_opencode(tmp_path / "prefix", with_config_dependencies=True)
    home = tmp_path / "home"
    cli = SESSION_CLIS["opencode"]
    cli.write_settings(home, MODEL_URL)
    assert cli.settle_home(home, binary)
    folder = home / ".config" / "opencode"
    assert json.loads((folder / "package.json").read_text()) == {
        "dependencies": {"@opencode-ai/plugin": "1.18.33"}
    }
    assert (folder / "node_modules").resolve() == (
        tmp_path / "prefix" / "config-deps" / "node_modules"
    ).resolve()
    assert (folder / "node_modules" / "@opencode-ai" / "plugin").is_dir()
    assert (folder / "opencode.json").is_file(), "the person's own config stays"


def test_an_opencode_home_is_left_as_it_is_when_nothing_was_installed_beside_the_binary(
    tmp_path: Path,
) -> None:
    binary = _installed_opencode(tmp_path / "prefix", with_config_dependencies=False)
    home = tmp_path / "home"
    SESSION_CLIS["opencode"].write_settings(home, MODEL_URL)
    assert not SESSION_CLIS["opencode"].settle_home(home, binary)
    assert sorted(p.name for p in (home / ".config" / "opencode").iterdir()) == ["opencode.json"]


def test_the_copilot_recipe_points_its_provider_at_the_fake_offline_with_the_unpacked_runtime(
    tmp_path: Path,
) -> None:
    cli = SESSION_CLIS["copilot"]
    cli.write_settings(tmp_path, MODEL_URL)
    assert not any(tmp_path.iterdir()), "Copilot CLI's provider is environment only"
    env = cli.environment(PERSONS_ENV, tmp_path, "/opt/copilot/node_modules/.bin/copilot", MODEL_URL)
    assert env["COPILOT_PROVIDER_BASE_URL"] == MODEL_URL
    assert (env["COPILOT_OFFLINE"], env["HOME"]) == ("true", str(tmp_path))
    assert env["COPILOT_PKG_CACHE_HOME"] == "/opt/copilot/pkg-cache"
    assert env["COPILOT_MODEL"] != PERSONS_ENV["COPILOT_MODEL"]
    assert not {"GITHUB_TOKEN", "GH_TOKEN", "OPENAI_API_KEY", "XDG_CONFIG_HOME"} & set(env)
    argv = cli.argv("/bin/copilot", "a prompt")
    assert argv[:3] == ["/bin/copilot", "-p", "a prompt"] and "-s" in argv


def test_a_cli_is_started_with_pwd_naming_the_project_it_runs_in_not_the_benchs_own(tmp_path: Path) -> None:
    # OpenCode takes its project folder (and so the hooks' namespace) from PWD
    show_pwd = [sys.executable, "-c", "import os; print(os.environ['PWD'])"]
    _, printed = asyncio.run(_command(show_pwd, tmp_path, {"PWD": "/somewhere/else"}, 30))
    assert printed.strip() == str(tmp_path)
