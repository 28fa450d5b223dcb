"""The HNSW walk's candidate list grows with the table (`app.recall.ef_search`)."""

from __future__ import annotations

import pytest

from app.recall.ef_search import EF_SEARCH_CEILING, ef_search_for
from app.recall.settings import RecallSettings


@pytest.mark.parametrize("rows", [0, 1, 50_000, 100_000])
def test_a_table_up_to_the_threshold_walks_with_the_configured_list(rows: int) -> None:
    assert ef_search_for(rows, RecallSettings()) == 100


@pytest.mark.parametrize(
    ("rows", "expected"),
    [(1_000_000, 200), (10_000_000, 300), (316_228, 150), (200_000, 130)],  # 100 + 100 x log10(rows / 100k)
)
def test_the_list_grows_by_the_step_for_each_tenfold_of_rows_beyond(rows: int, expected: int) -> None:
    assert ef_search_for(rows, RecallSettings()) == expected


def test_the_threshold_and_the_step_are_settings() -> None:
    settings = RecallSettings(ef_search=40, ef_search_grows_above=200, ef_search_per_tenfold=60)
    assert ef_search_for(200, settings) == 40
    assert ef_search_for(20_000, settings) == 160


def test_a_step_of_zero_keeps_the_list_whatever_the_size() -> None:
    assert ef_search_for(10**9, RecallSettings(ef_search=150, ef_search_per_tenfold=0)) == 150


def test_the_list_never_passes_what_pgvector_accepts() -> None:
    settings = RecallSettings(ef_search=900, ef_search_per_tenfold=1000)
    assert ef_search_for(10**9, settings) == EF_SEARCH_CEILING == 1000
