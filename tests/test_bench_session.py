"""`memoria bench session`'s arithmetic and report, on a tiny run with a made-up clock instead of a
real CLI (the real CLIs are the bench's to run): the arms interleave on shared prompts, warm-up
rounds are left out, the added time and its bootstrap interval are computed as documented, and the
report renders into a dated page with `memoria bench report`."""

from __future__ import annotations

import asyncio
import json
import statistics
from pathlib import Path

from memoria_bench.pages import render_file
from memoria_bench.provenance import PROVENANCE
from memoria_bench.session.run import BARE, HOOKS, SessionOptions, interleaved, session_report
from memoria_bench.session.stats import median_difference_ci, session_summary


def test_rounds_alternate_the_arms_order_on_one_prompt_each_and_leave_the_warmup_out() -> None:
    calls: list[tuple[str, str]] = []

    async def time_arm(arm: str, prompt: str) -> float:
        calls.append((arm, prompt))
        return float(len(calls))

    samples = asyncio.run(interleaved(runs=3, warmup=1, time_arm=time_arm))
    assert [arm for arm, _ in calls] == [HOOKS, BARE, BARE, HOOKS, HOOKS, BARE, BARE, HOOKS]
    prompts = [prompt for _, prompt in calls]
    assert all(prompts[i] == prompts[i + 1] for i in range(0, 8, 2))
    assert len(set(prompts)) == 4
    assert samples == {HOOKS: [4.0, 5.0, 8.0], BARE: [3.0, 6.0, 7.0]}


def test_the_added_time_is_the_hooked_arms_figure_less_the_bare_arms_and_judged_on_the_median() -> None:
    hooked = [1100.0, 1120.0, 1140.0, 1160.0, 1900.0]
    bare = [1000.0, 1010.0, 1020.0, 1030.0, 1040.0]
    summary = session_summary(hooked, bare)
    assert summary["arms"][HOOKS]["median_ms"] == 1140.0
    assert summary["arms"][BARE]["median_ms"] == 1020.0
    assert summary["added"]["median_ms"] == 120.0
    assert summary["added"]["p95_ms"] == round(
        summary["arms"][HOOKS]["p95_ms"] - summary["arms"][BARE]["p95_ms"], 1
    )
    assert [(check["value"], check["met"]) for check in summary["targets"]] == [(120.0, True)]
    assert session_summary([v + 200 for v in bare], bare)["targets"][0]["met"] is False


def test_the_bootstrap_interval_holds_the_median_difference_and_is_reproducible() -> None:
    hooked = [1100.0 + 7 * i for i in range(30)]
    bare = [1000.0 + 5 * i for i in range(30)]
    low, high = median_difference_ci(hooked, bare)
    assert low <= statistics.median(hooked) - statistics.median(bare) <= high
    assert (low, high) == median_difference_ci(hooked, bare)
    assert median_difference_ci(bare, bare, resamples=200)[0] <= 0 <= median_difference_ci(bare, bare)[1]


def test_the_report_names_the_agent_keeps_every_sample_and_renders_as_a_dated_page(tmp_path: Path) -> None:
    samples = {HOOKS: [510.0, 530.0, 550.0], BARE: [400.0, 420.0, 440.0]}
    report = session_report(
        SessionOptions("codex", runs=3, warmup=1), "/bin/codex", samples, {HOOKS: 4, BARE: 0}
    )
    assert (report["agent"], report["sessions_per_arm"], report["added"]["median_ms"]) == ("codex", 4, 110.0)
    assert report["samples_ms"] == samples
    assert report["sessions_given_context"] == {HOOKS: 4, BARE: 0}
    report[PROVENANCE] = {"bench": "session", "label": "codex", "started_utc": "2026-11-28T03:00:00+00:00"}
    source = tmp_path / "session.json"
    source.write_text(json.dumps(report))
    page = render_file(source, tmp_path / "reports")
    assert page.name == "2026-11-28-session-codex.md"
    text = page.read_text()
    assert "median added <= 150 ms" in text and "| no hooks |" in text
