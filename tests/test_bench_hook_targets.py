"""`memoria bench hook`'s judgement of its own figures: the prompt hook's p95 against #37's target,
the host's timeout over it as headroom; and the hook processes run with bytecode caching on, as on
a person's machine (no figures measured here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.hooks.hosts import HOSTS
from memoria_bench.hook_latency import HOOK_ROW, hook_environment, hook_targets


def _rows(p95_ms: float) -> list[dict[str, Any]]:
    return [
        {"measure": "http endpoint", "p95_ms": 1.0},
        {"measure": HOOK_ROW, "p95_ms": p95_ms},
        {"measure": "command hook, server down", "p95_ms": 1.0},
    ]


def test_a_prompt_hook_p95_within_the_target_meets_both_checks_with_the_timeout_over_p95_as_headroom() -> (
    None
):
    checks = hook_targets("codex", _rows(40.0))
    assert [(check["value"], check["met"]) for check in checks] == [(40.0, True), (75.0, True)]


def test_a_slow_prompt_hook_misses_the_p95_target_and_the_headroom_target() -> None:
    checks = hook_targets("gemini", _rows(400.0))
    assert [(check["value"], check["met"]) for check in checks] == [(400.0, False), (7.5, False)]


def test_a_host_whose_timeout_the_bench_does_not_know_is_judged_on_its_p95_alone() -> None:
    assert [check["met"] for check in hook_targets("not-a-host", _rows(10.0))] == [True]


def test_hook_processes_run_as_on_a_persons_machine_with_bytecode_caching_on_and_no_pythonpath(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("MEMORIA_CLIENT__HOOK_BUDGET_S", "9")
    env = hook_environment("the-key", tmp_path / "hook.log")
    assert not {"PYTHONDONTWRITEBYTECODE", "PYTHONPATH", "MEMORIA_CLIENT__HOOK_BUDGET_S"} & set(env)
    assert (env["MEMORIA_CLIENT__API_KEY"], env["MEMORIA_CLIENT__HOOK_LOG"]) == (
        "the-key",
        str(tmp_path / "hook.log"),
    )


@pytest.mark.parametrize("agent", list(HOSTS))
def test_every_host_is_judged_for_headroom_against_its_own_timeout(agent: str) -> None:
    checks = hook_targets(agent, _rows(40.0))
    assert [check["target"].split()[0] for check in checks] == ["command", "timeout"]
