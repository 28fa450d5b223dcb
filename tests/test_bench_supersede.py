"""`memoria bench supersede`: the dev set it ships, and the rule's precision on it with the local model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.embeddings import LocalEmbedder
from memoria_bench.cli import bench
from memoria_bench.supersede import DEV_PAIRS, bench_supersede, load_pairs


def test_the_dev_set_holds_enough_labelled_pairs_of_both_kinds() -> None:
    pairs = load_pairs(DEV_PAIRS)
    assert len(pairs) >= 150
    assert len({p.id for p in pairs}) == len(pairs)
    labels = {p.label for p in pairs}
    assert labels == {"supersedes", "not"}
    assert all(p.new.created_at > p.old.created_at for p in pairs)


def test_a_malformed_pair_is_named_by_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "pairs.jsonl"
    bad.write_text(json.dumps({"id": "x", "group": "g", "label": "maybe", "old": "a", "new": "b"}) + "\n")
    with pytest.raises(ValueError, match=r"pairs.jsonl:1: label 'maybe'"):
        load_pairs(bad)


def test_the_bench_is_a_command_of_the_bench_group() -> None:
    assert "supersede" in bench.commands


async def test_confident_calls_on_the_dev_set_meet_the_precision_target(embedder: LocalEmbedder) -> None:
    report = await bench_supersede(load_pairs(DEV_PAIRS), embedder, bootstrap=200)
    confident = report["confident"]
    assert confident["precision"] >= 0.95, report["wrong_calls"]
    assert confident["recall"] > 0.5
    assert report["confident_or_suggest"]["recall"] >= confident["recall"]
    low, high = confident["recall_ci95"]
    assert low <= confident["recall"] <= high
