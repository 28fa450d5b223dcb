"""The typed arguments of the automatic supersede's named queries (`supersede.sql`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from app.db.queries import NamedQuery

FILE = ("app.links", "supersede.sql")


class _SupersedeQuery(NamedQuery):
    SQL_FILE: ClassVar[tuple[str, str]] = FILE


@dataclass(frozen=True, slots=True, kw_only=True)
class SupersedeSubjects(_SupersedeQuery):
    QUERY = "supersede_subjects"
    memory_ids: list[int]


@dataclass(frozen=True, slots=True, kw_only=True)
class SupersedeCandidatesOfMany(_SupersedeQuery):
    QUERY = "supersede_candidates_of_many"
    memory_ids: list[int]
    gone_names: list[str | None]
    """One per memory: the values it names as left behind, space-separated
    (`supersede_named.gone_names`); the older memories naming them are candidates too, however far
    their embeddings."""
    exact_below: int
    """A namespace with fewer live vectors than this is scanned exactly, a bigger one walked."""
    limit: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SupersedeOwners(_SupersedeQuery):
    QUERY = "supersede_owners"
    memory_ids: list[int]


QUERIES: tuple[type[NamedQuery], ...] = (
    SupersedeSubjects,
    SupersedeCandidatesOfMany,
    SupersedeOwners,
)
"""Every query of `supersede.sql`, for the test that holds them to their arguments."""
