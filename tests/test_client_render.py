"""The terminal tables keep ids whole, whatever the width: `forget ID` and `promote ID` need them."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from app.client.render import memory_lines, memory_table, recall_table

LONG_ID = 8989061234567890


def _memory(memory_id: int, content: str) -> dict[str, Any]:
    return {
        "id": memory_id,
        "namespace": "@alice/repo:shop-api-with-a-long-name",
        "category": "decision",
        "tags": ["deploy", "terraform", "infrastructure"],
        "created_at": "2026-11-27T13:31:19.123456+00:00",
        "content": content,
    }


ITEMS = [
    _memory(LONG_ID, "We deploy with Terraform from the infra repository; never apply by hand. " * 4),
    _memory(42, "Short   one\nacross lines"),
]


def _rendered(renderable: Any, width: int) -> str:
    out = io.StringIO()
    Console(file=out, width=width, highlight=False, color_system=None).print(renderable)
    return out.getvalue()


@pytest.mark.parametrize("width", [60, 80, 140, 250])
def test_list_table_prints_every_id_whole_and_shrinks_the_content(width: int) -> None:
    text = _rendered(memory_table(ITEMS), width)
    assert str(LONG_ID) in text
    assert all(len(line) <= width for line in text.splitlines())
    rows = [line for line in text.splitlines() if str(LONG_ID) in line]
    assert len(rows) == 1 and "…" in rows[0]
    assert "2026-11-27 13:31" in text


def test_recall_table_prints_ids_whole_on_a_narrow_terminal() -> None:
    result = {
        "results": [
            {"id": LONG_ID, "score": 0.5, "namespace": "repo:x", "category": None, "content": "word " * 60}
        ]
    }
    assert str(LONG_ID) in _rendered(recall_table(result, explain=True), 80)


def test_piped_list_lines_are_tab_separated_whole_and_one_per_memory() -> None:
    lines = memory_lines(ITEMS)
    assert [line.split("\t")[0] for line in lines] == [str(LONG_ID), "42"]
    assert lines[1].split("\t") == [
        "42",
        "@alice/repo:shop-api-with-a-long-name",
        "decision",
        "deploy,terraform,infrastructure",
        "2026-11-27 13:31",
        "Short one across lines",
    ]
    assert lines[0].split("\t")[-1] == " ".join(ITEMS[0]["content"].split())
