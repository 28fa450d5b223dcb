"""The configuration reference (docs/configuration-reference.md) is generated from `Settings`: every
setting has exactly one row there, and every row is a setting. The committed page must be what a fresh
render gives, so a new, renamed or re-described setting fails here until the page is regenerated."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.settings_reference import PAGE, REGENERATE, render, rows

ROOT = Path(__file__).resolve().parent.parent
ROW = re.compile(r"^\| `(MEMORIA_[A-Z0-9_]+)` \|", re.MULTILINE)


@pytest.fixture(autouse=True)
def _standard_dirs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Path defaults (data dir, caches, key file) follow the XDG variables: render the stock ones."""
    for name in ("XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(name, raising=False)


def test_every_setting_has_one_row_and_every_row_is_a_setting() -> None:
    committed = ROW.findall((ROOT / PAGE).read_text(encoding="utf-8"))
    settings = [row.variable for row in rows()]
    missing = sorted(set(settings) - set(committed))
    stale = sorted(set(committed) - set(settings))
    assert not missing and not stale, (
        f"settings without a row: {missing}; rows without a setting: {stale}. Regenerate: {REGENERATE}"
    )
    assert len(committed) == len(set(committed)), "a setting has two rows"


def test_the_committed_page_is_a_fresh_render() -> None:
    assert (ROOT / PAGE).read_text(encoding="utf-8") == render(), (
        f"{PAGE} differs from app.settings.Settings. Regenerate: {REGENERATE}"
    )


def test_every_setting_says_what_it_is_for() -> None:
    undescribed = [row.variable for row in rows() if not row.description]
    assert not undescribed, f"add a Field description (what and why) to: {undescribed}"
