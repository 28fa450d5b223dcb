"""`memoria bench concepts`: the labelled sample covers what the extractor yields, and the figure is
the share of labelled concepts that are specific."""

from __future__ import annotations

from memoria_bench.concepts import bench_concepts, precision


def test_every_concept_the_extractor_yields_on_the_sample_is_labelled() -> None:
    report = bench_concepts()
    assert report["memories"] == 120
    assert report["now"]["unlabelled"] == [] and report["before"]["unlabelled"] == []
    assert report["now"]["labelled"] > 0 and report["before"]["labelled"] == 120


def test_precision_counts_specific_labelled_concepts_and_lists_unlabelled_ones() -> None:
    figures = precision(
        ["pgvector", "every", "pgvector", "quokka"], {"pgvector": "specific", "every": "generic"}
    )
    assert (figures.specific, figures.labelled, figures.unlabelled) == (2, 3, ["quokka"])
    low, high = figures.wilson()
    assert low < 2 / 3 < high
