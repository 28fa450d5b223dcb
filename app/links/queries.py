"""The typed arguments of the links domain's named queries (`links.sql`), one class per query.

As in app/memories/queries.py: one field per `:name` parameter, in the order the query first uses
them; `tests/test_memories_queries.py` holds each class to its query.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from app.db.queries import NamedQuery

FILE = ("app.links", "links.sql")


class _LinksQuery(NamedQuery):
    SQL_FILE: ClassVar[tuple[str, str]] = FILE


@dataclass(frozen=True, slots=True, kw_only=True)
class LockEnds(_LinksQuery):
    QUERY = "lock_ends"
    user_id: int
    public_ids: list[int]


@dataclass(frozen=True, slots=True, kw_only=True)
class LockNamespaceLinks(_LinksQuery):
    QUERY = "lock_namespace_links"
    namespace_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Reaches(_LinksQuery):
    QUERY = "reaches"
    from_id: int
    kind: str
    max_depth: int
    to_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SupersededBy(_LinksQuery):
    QUERY = "superseded_by"
    memory_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class InsertLink(_LinksQuery):
    QUERY = "insert_link"
    source_id: int
    target_id: int
    kind: str
    origin: str
    reason: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class EndSuperseded(_LinksQuery):
    QUERY = "end_superseded"
    source_id: int
    target_id: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ReopenSuperseded(_LinksQuery):
    QUERY = "reopen_superseded"
    source_id: int
    target_id: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteLink(_LinksQuery):
    QUERY = "delete_link"
    source_id: int
    kind: str
    target_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class LinksOf(_LinksQuery):
    QUERY = "links_of"
    user_id: int
    memory_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class NamespaceLinks(_LinksQuery):
    QUERY = "namespace_links"
    namespace_ids: list[int]
    user_id: int
    include_sensitive: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class SeenMemory(_LinksQuery):
    QUERY = "seen_memory"
    user_id: int
    public_id: int


QUERIES: tuple[type[NamedQuery], ...] = (
    LockEnds,
    LockNamespaceLinks,
    Reaches,
    SupersededBy,
    InsertLink,
    EndSuperseded,
    ReopenSuperseded,
    DeleteLink,
    LinksOf,
    NamespaceLinks,
    SeenMemory,
)
