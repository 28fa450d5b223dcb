"""The typed arguments of the capture domain's named queries (`capture.sql`), one class per query.

Each class names its query and binds it: one field per `:name` parameter, in the order the query
first uses them (app/db/queries.py numbers them by that order, as for every domain's SQL).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from app.db.queries import NamedQuery

FILE = ("app.capture", "capture.sql")


class _CaptureQuery(NamedQuery):
    SQL_FILE: ClassVar[tuple[str, str]] = FILE


@dataclass(frozen=True, slots=True, kw_only=True)
class FoldEpisodes(_CaptureQuery):
    QUERY = "fold_episodes"
    namespace_ids: list[int]
    fold_keys: list[bytes]
    capture_keys: list[str]
    seen_at: list[datetime]
    expires_at: list[datetime]


@dataclass(frozen=True, slots=True, kw_only=True)
class SetFoldKeys(_CaptureQuery):
    QUERY = "set_fold_keys"
    public_ids: list[int]
    fold_keys: list[bytes]


QUERIES: tuple[type[NamedQuery], ...] = (FoldEpisodes, SetFoldKeys)
