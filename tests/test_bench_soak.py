"""`memoria bench soak`: its outage arithmetic, and a short real run against `memoria serve`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memoria_bench.cli import bench
from memoria_bench.soak.load import RECALL, STORE, Sample
from memoria_bench.soak.outage import outage
from memoria_bench.soak.report import rss_growth, targets
from memoria_bench.soak.run import error_statuses
from tests.test_bench_corpus import write_sentences


def _run(*events: tuple[float, str, int]) -> list[Sample]:
    return [Sample(at_s, op, 5.0, status) for at_s, op, status in events]


def test_the_outage_ends_when_a_store_and_a_recall_have_both_succeeded_again() -> None:
    samples = _run(
        (1.0, STORE, 201), (10.5, RECALL, 0), (11.0, STORE, 503), (12.0, RECALL, 200),
        (13.0, STORE, 503), (14.0, STORE, 201), (15.0, RECALL, 200),
    )  # fmt: skip
    found = outage(samples, kill_at_s=10.0)
    assert found["recovery_s"] == 4.0
    assert found["store_back_after_s"] == 4.0 and found["recall_back_after_s"] == 2.0
    assert found["errors_during_outage"] == 3 and found["errors_outside_outage"] == 0


def test_errors_before_the_kill_or_after_the_recovery_count_outside_the_outage() -> None:
    samples = _run(
        (2.0, RECALL, 500), (10.5, STORE, 0), (11.0, STORE, 201), (11.5, RECALL, 200), (20.0, RECALL, 503)
    )
    found = outage(samples, kill_at_s=10.0)
    assert found["recovery_s"] == 1.5
    assert found["errors_during_outage"] == 1 and found["errors_outside_outage"] == 2


def test_requests_in_flight_at_the_kill_that_still_succeed_are_not_a_recovery() -> None:
    samples = _run(
        (10.02, STORE, 201), (10.03, RECALL, 200),  # sent before the kill, answered just after it
        (10.5, RECALL, 503), (11.0, STORE, 503), (12.0, STORE, 201), (13.0, RECALL, 200),
    )  # fmt: skip
    found = outage(samples, kill_at_s=10.0)
    assert found["recovery_s"] == 3.0 and found["store_back_after_s"] == 2.0
    assert found["errors_during_outage"] == 2 and found["errors_outside_outage"] == 0


def test_a_service_that_never_comes_back_has_no_recovery_and_misses_the_target() -> None:
    samples = _run((11.0, STORE, 0), (12.0, RECALL, 200))
    found = outage(samples, kill_at_s=10.0)
    assert found["recovery_s"] is None
    report = {"lost_writes": 0, "rss": {"growth": 0.01}, "errors": 1, "outage": found}
    assert not all(check["met"] for check in targets(report))


def test_a_500_during_an_outage_misses_the_target_that_503s_and_silence_meet() -> None:
    samples = _run((10.5, STORE, 0), (11.0, STORE, 503), (11.2, RECALL, 503), (12.0, STORE, 201),
                   (12.5, RECALL, 200))  # fmt: skip
    found = outage(samples, kill_at_s=10.0)
    report = {"lost_writes": 0, "rss": {"growth": 0.01}, "errors": 3, "outage": found}
    report["error_statuses"] = error_statuses(samples)
    assert report["error_statuses"] == {"0": 1, "503": 2}
    assert all(check["met"] for check in targets(report))

    with_500 = [*samples[:1], Sample(11.1, STORE, 5.0, 500), *samples[1:]]
    report["error_statuses"] = error_statuses(with_500)
    missed = [check for check in targets(report) if not check["met"]]
    assert [(check["target"], check["value"]) for check in missed] == [("no 5xx but 503", 1)]


def test_memory_growth_is_counted_from_the_end_of_the_warm_up() -> None:
    growth = rss_growth([(0.0, 100.0), (30.0, 300.0), (61.0, 400.0), (120.0, 420.0)], warmup_s=60.0)
    assert growth == {"after_warmup_mb": 400.0, "end_mb": 420.0, "growth": 0.05}


@pytest.mark.e2e
def test_a_short_soak_on_a_real_server_loses_nothing_and_reports_every_minute(tmp_path: Path) -> None:
    out = tmp_path / "soak.json"
    args = ["soak", "--minutes", "0.1", "--clients", "2", "--preload", "20", "--warmup", "3"]
    args += ["--sentences", str(write_sentences(tmp_path / "sentences.txt")), "--json", str(out)]
    args += ["--data-dir", str(tmp_path / "pgdata")]
    result = CliRunner().invoke(bench, args, catch_exceptions=False)
    report = json.loads(out.read_text())
    assert result.exit_code == 0, result.output
    assert report["acknowledged"] > 20 and report["lost_writes"] == 0 and report["errors"] == 0
    assert report["totals"][RECALL]["n"] > 0 and report["totals"][STORE]["n"] > 0
    assert [row["minute"] for row in report["minutes"]] == [1]
    assert "minute   1" in result.output and "acknowledged stores:" in result.output
