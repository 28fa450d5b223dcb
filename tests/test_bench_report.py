"""Bench reports carry their provenance, and `memoria bench report` renders them as dated pages."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import click
from click.testing import CliRunner

from memoria_bench.cli import bench
from memoria_bench.provenance import command_line

PROVENANCE = {
    "bench": "quality",
    "label": "locomo-turns",
    "command": "memoria bench quality --data ../shared/bench/locomo --corpus turns",
    "commit": "0123456789abcdef0123456789abcdef01234567",
    "started_utc": "2026-11-27T13:40:00+00:00",
    "finished_utc": "2026-11-27T13:52:10+00:00",
    "machine": {
        "cpus": 2,
        "memory_gib": 7.7,
        "load_before": [0.5, 0.75, 1.0],
        "load_after": [1.75, 1.5, 1.25],
        "python": "3.11.9",
        "platform": "Linux-6.1-x86_64",
    },
}

QUALITY: dict[str, Any] = {
    "corpus": "turns",
    "queries": 3,
    "systems": {
        "lexical": {
            "overall": {"recall@10": 0.5, "mrr": 0.25},
            "by_stratum": {"multi-hop": {"recall@10": 0.125, "mrr": 0.0625}},
        },
        "all": {"overall": {"recall@10": 0.875, "mrr": 0.6}, "by_stratum": {}},
    },
    "paired_ci": {"all - lexical": {"overall": {"recall@10": [0.25, 0.5]}}},
    "targets": [{"name": "R@10 ≥ 0.8", "value": 0.875, "met": True}],
    "provenance": PROVENANCE,
}


def _render(tmp_path: Path, report: Any) -> tuple[int, str, Path]:
    source = tmp_path / "report.json"
    source.write_text(json.dumps(report))
    out = tmp_path / "docs" / "benchmarks" / "reports"
    result = CliRunner().invoke(bench, ["report", str(source), "--out", str(out)])
    return result.exit_code, result.output, out


def test_a_report_renders_as_a_dated_page_with_its_provenance_and_a_table_of_its_figures(
    tmp_path: Path,
) -> None:
    code, output, out = _render(tmp_path, QUALITY)
    assert code == 0, output
    page = out / "2026-11-27-quality-locomo-turns.md"
    copy = out / "2026-11-27-quality-locomo-turns.json"
    assert sorted(p.name for p in out.iterdir()) == [copy.name, page.name]
    assert json.loads(copy.read_text()) == QUALITY  # the page's source sits beside it, under its name
    text = page.read_text()
    assert text.startswith("# memoria bench quality (locomo-turns), 2026-11-27\n")
    assert f"[{copy.name}]({copy.name})" in text
    assert "`memoria bench quality --data ../shared/bench/locomo --corpus turns`" in text
    assert "`0123456789abcdef0123456789abcdef01234567`" in text
    assert "| load average before (1, 5, 15 min) | 0.5, 0.75, 1 |" in text
    assert "| load average after (1, 5, 15 min) | 1.75, 1.5, 1.25 |" in text
    assert "| CPUs | 2 |" in text and "| memory (GiB) | 7.7 |" in text
    assert "| R@10 ≥ 0.8 | 0.875 | yes |" in text
    assert "| queries | 3 |" in text
    # one row per system and part, one column per figure
    assert "|  | part | recall@10 | mrr |" in text
    assert "| lexical | overall | 0.5 | 0.25 |" in text
    assert "| lexical | by_stratum.multi-hop | 0.125 | 0.0625 |" in text
    assert "| all | overall | 0.875 | 0.6 |" in text
    assert "| all - lexical | overall | 0.25, 0.5 |" in text
    assert str(tmp_path) not in text  # the page names the JSON file, not where it sat


def test_rendering_the_same_report_again_gives_the_same_page(tmp_path: Path) -> None:
    _, _, out = _render(tmp_path, QUALITY)
    first = (out / "2026-11-27-quality-locomo-turns.md").read_text()
    _render(tmp_path, QUALITY)
    assert sorted(p.name for p in out.iterdir()) == [
        "2026-11-27-quality-locomo-turns.json",
        "2026-11-27-quality-locomo-turns.md",
    ]
    assert (out / "2026-11-27-quality-locomo-turns.md").read_text() == first


def test_a_list_of_records_renders_one_row_each_and_a_report_without_a_label_is_named_by_bench(
    tmp_path: Path,
) -> None:
    rows = [
        {"measure": "http endpoint", "runs": 4, "p50_ms": 3.25, "note": "injected 4"},
        {"measure": "command hook | down", "runs": 4, "p50_ms": 41.0, "note": "empty 4"},
    ]
    origin = {**PROVENANCE, "bench": "hook", "label": None}
    code, output, out = _render(tmp_path, {"rows": rows, "provenance": origin})
    assert code == 0, output
    text = (out / "2026-11-27-hook.md").read_text()
    assert "| measure | runs | p50_ms | note |" in text
    assert "| http endpoint | 4 | 3.25 | injected 4 |" in text
    assert "| command hook \\| down | 4 | 41 | empty 4 |" in text


def test_a_report_without_provenance_is_refused_with_the_reason(tmp_path: Path) -> None:
    code, output, out = _render(tmp_path, {"corpus": "turns", "queries": 3})
    assert code != 0
    assert "has no provenance" in output and "run the bench again" in output
    assert not out.exists()


def test_a_bench_json_report_carries_its_command_commit_date_and_machine(tmp_path: Path) -> None:
    out = tmp_path / "secrets.json"
    args = ["secrets", "--secrets", "20", "--lookalikes", "20", "--long-memories", "2", "--repeat", "1"]
    result = CliRunner().invoke(bench, [*args, "--json", str(out)])
    # exit 1 only says a target was missed on this machine; the report is written either way
    assert result.exit_code in (0, 1), result.output
    origin = json.loads(out.read_text())["provenance"]
    assert origin["bench"] == "secrets"
    assert origin["command"] == f"memoria bench {' '.join(args)} --json {out}"
    assert re.fullmatch(r"[0-9a-f]{40}(\+dirty)?", origin["commit"]), origin["commit"]
    assert origin["started_utc"] <= origin["finished_utc"]
    assert origin["started_utc"].endswith("+00:00")
    machine = origin["machine"]
    assert machine["cpus"] == os.cpu_count() and machine["memory_gib"] > 0
    assert len(machine["load_before"]) == len(machine["load_after"]) == 3
    assert machine["python"].startswith("3.")
    code, output, pages = _render(tmp_path, json.loads(out.read_text()))
    assert code == 0, output
    page = pages / f"{origin['started_utc'][:10]}-secrets.md"
    assert "## Targets" in page.read_text() and "## corpora" in page.read_text()


def test_the_command_line_in_a_report_gives_every_option_set_but_never_an_api_key() -> None:
    @click.command("hook")
    @click.option("--key")
    @click.option("--runs", type=int, default=30)
    @click.option("--warmup", type=int, default=3)
    @click.option("--check", is_flag=True)
    def hook(key: str | None, runs: int, warmup: int, check: bool) -> None:
        pass

    ctx = hook.make_context("hook", ["--key", "mem_live_secret", "--runs", "4", "--check"])
    line = command_line(ctx, ("memoria", "bench", "hook"))
    assert line == "memoria bench hook --key REDACTED --runs 4 --check"


def test_a_long_text_such_as_a_query_plan_stays_in_the_json(tmp_path: Path) -> None:
    plan = "Nested Loop  (cost=1.00..2.00 rows=10 width=277) " * 40
    report = {
        "explain": {"big/all": {"slowest": {"text": plan, "execution_ms": 11.5}}},
        "provenance": PROVENANCE,
    }
    code, output, out = _render(tmp_path, report)
    assert code == 0, output
    text = (out / "2026-11-27-quality-locomo-turns.md").read_text()
    assert "Nested Loop" not in text
    assert f"{len(plan):,} characters, in the JSON report" in text
    assert "11.5" in text
    assert "Nested Loop" in (out / "2026-11-27-quality-locomo-turns.json").read_text()
