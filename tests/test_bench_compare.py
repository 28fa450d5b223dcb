"""`memoria bench compare`: two `bench quality --per-query` files paired query by query, so a change
that needs the corpus stored again (another embedder) still gets paired CIs of R@10, R@1 and MRR."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memoria_bench.cli import bench
from memoria_bench.compare import CompareError, compare, read_per_query

METRICS = ["recall@10", "recall@1", "mrr"]


def per_query(values: dict[str, list[float]], system: str = "all") -> dict[str, Any]:
    """A per-query file: query id -> [R@10, R@1, MRR]; stratum from the id's first letter."""
    return {
        "corpus": "locomo-dev-turns",
        "queries": [{"query_id": q, "stratum": q[0]} for q in values],
        "systems": {system: list(values.values())},
        "metrics": METRICS,
    }


def test_differences_are_paired_by_query_id_not_by_position() -> None:
    after = per_query({"a1": [1.0, 1.0, 1.0], "b1": [0.0, 0.0, 0.0]})
    before = per_query({"b1": [0.0, 0.0, 0.0], "a1": [1.0, 0.0, 0.5]})
    report = compare(after, before)
    overall = report["figures"]["overall"]
    assert overall["recall@10"]["ci"] == [0.0, 0.0]
    assert overall["recall@1"] == {"after": 0.5, "before": 0.0, "difference": 0.5, "ci": [0.0, 1.0]}
    assert report["figures"]["a"]["mrr"]["difference"] == 0.5
    assert report["figures"]["b"]["queries"] == 1


def test_files_of_other_queries_are_refused() -> None:
    with pytest.raises(CompareError, match="other queries"):
        compare(per_query({"a1": [1.0, 1.0, 1.0]}), per_query({"a2": [1.0, 1.0, 1.0]}))


def test_an_unknown_system_names_the_ones_the_file_has() -> None:
    with pytest.raises(CompareError, match="has no system 'dense' \\(it has all\\)"):
        compare(per_query({"a1": [1.0, 1.0, 1.0]}), per_query({"a1": [1.0, 1.0, 1.0]}), "dense")


def test_systems_of_one_file_can_be_compared_with_each_other(tmp_path: Path) -> None:
    data = per_query({"a1": [1.0, 1.0, 1.0]})
    data["systems"]["dense"] = [[0.0, 0.0, 0.0]]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data))
    saved_to = tmp_path / "c.json"
    args = ["compare", str(path), str(path), "--before-system", "dense", "--json", str(saved_to)]
    result = CliRunner().invoke(bench, args)
    assert result.exit_code == 0, result.output
    assert "0.000 → 1.000" in result.output
    saved = json.loads(saved_to.read_text())
    assert saved["before"] == "dense" and saved["figures"]["overall"]["mrr"]["difference"] == 1.0


def test_a_file_that_is_not_a_per_query_file_is_a_usage_error(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"corpus": "turns", "systems": {}}))
    result = CliRunner().invoke(bench, ["compare", str(report), str(report)])
    assert result.exit_code == 2
    assert "not a per-query file" in result.output
    with pytest.raises(CompareError, match="not a readable"):
        read_per_query(tmp_path / "missing.json")


def test_the_comparison_names_the_commit_of_each_run(tmp_path: Path) -> None:
    """Two runs of other commits are only comparable knowing which is which: the page and its JSON
    say each file's commit, and a file from before per-query provenance says it is unknown."""
    after = per_query({"a1": [1.0, 1.0, 1.0]})
    after["provenance"] = {"commit": "abc123", "started_utc": "2026-11-28T15:00:00+00:00", "command": "x"}
    paths = {}
    for side, data in (("after", after), ("before", per_query({"a1": [0.0, 0.0, 0.0]}))):
        paths[side] = tmp_path / f"{side}.json"
        paths[side].write_text(json.dumps(data))
    saved_to = tmp_path / "c.json"
    args = ["compare", str(paths["after"]), str(paths["before"]), "--json", str(saved_to)]
    result = CliRunner().invoke(bench, args)
    assert result.exit_code == 0, result.output
    assert "after: commit abc123, run 2026-11-28T15:00:00+00:00" in result.output
    assert "before: commit unknown" in result.output
    runs = json.loads(saved_to.read_text())["runs"]
    assert runs["after"]["commit"] == "abc123" and runs["before"]["commit"] is None
