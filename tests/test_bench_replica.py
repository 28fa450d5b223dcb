"""`memoria bench replica`: one tiny run end to end (a real primary, a real streaming replica, a
real `memoria serve` per leg). No figure is asserted: speed is what the command prints; this checks
the report holds every leg, that the replica served reads only when the read URL named it, and that
the lag was sampled during the ingest."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from memoria_bench.cli import bench
from tests.test_bench_corpus import write_sentences


def test_a_tiny_run_reports_both_recall_legs_and_the_replicas_lag_under_ingest(tmp_path: Path) -> None:
    out = tmp_path / "replica.json"
    sentences = write_sentences(tmp_path / "sentences.txt")
    args = ["replica", "--memories", "100", "--requests", "20", "--ingest-memories", "300"]
    args += ["--ingest-rate", "600", "--ryw-rounds", "2", "--ryw-gap", "0.5"]
    args += ["--sentences", str(sentences), "--json", str(out)]
    result = CliRunner().invoke(bench, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    for leg in ("primary_alone", "with_replica"):
        assert {"c=1", "c=8"} <= set(report[leg])
        assert report[leg]["c=8"]["n"] == 20
    # the first leg's only replica transactions are none of the app's: its read URL was unset
    assert report["with_replica"]["replica_transactions"] > report["primary_alone"]["replica_transactions"]
    ingest = report["ingest"]
    assert ingest["accepted"] == 300 and ingest["failed_requests"] == 0
    assert ingest["lag"]["samples"] >= 1 and ingest["lag"]["lag_s_max"] >= 0
    # paced: the 300 memories went at 600/s at most (the last batch of 100 leaves 1/3 s in)
    assert ingest["target_per_s"] == 600 and ingest["seconds"] >= 1 / 3
    assert report["embedding_models"] == "all-MiniLM-L6-v2"
    # the writer finds what it stored, at once and later; every recall read somewhere the bench saw
    ryw = report["read_your_writes"]
    for when in ("immediate", "later"):
        figures = ryw[when]
        assert figures["recalls"] == figures["found"] == 2, ryw
        assert figures["read_on_primary"] + figures["read_on_replica"] >= 2, ryw
    assert "provenance" in report
