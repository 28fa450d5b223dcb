"""What the links API takes and answers."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal, get_args

import msgspec
from msgspec import Meta

LinkKind = Literal["supersedes", "resolved-by", "see-also", "part-of"]
"""Read "source <kind> target": the newer memory supersedes the older one; a problem is resolved
by its fix; a memory is part of a larger one; see-also relates two without an order."""
LINK_KINDS: tuple[str, ...] = get_args(LinkKind)
Origin = Literal["user", "auto"]
Direction = Literal["out", "in"]

PublicId = Annotated[int, Meta(ge=1, le=2**63 - 1, description="A memory's id")]


class LinkIn(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """A link from the memory in the path to `target`."""

    kind: LinkKind
    target: PublicId


class LinkedMemory(msgspec.Struct, kw_only=True):
    """The memory at the other end of a link, as much of it as a list shows."""

    id: int
    namespace: str
    content: str
    kind: str
    valid_from: datetime | None
    valid_to: datetime | None


class Link(msgspec.Struct, kw_only=True):
    kind: LinkKind
    direction: Direction
    """`out`: this memory <kind> the other one; `in`: the other one <kind> this memory (an `in`
    supersedes link means this memory is superseded)."""
    memory: LinkedMemory
    origin: Origin
    """`user`: made by a person or an agent; `auto`: the supersede rule made it on store or capture."""
    reason: str | None
    """Why the rule linked them (auto links), or null."""
    created_at: datetime


class LinkList(msgspec.Struct, kw_only=True):
    memory_id: int
    superseded_by: int | None
    """The memory that supersedes this one (null when none does): recall shows that one instead."""
    links: list[Link]


class ExportedLink(msgspec.Struct, kw_only=True):
    """A link in an export: both ends by the ids the export gives its memories."""

    source: int
    kind: LinkKind
    target: int
    origin: Origin = "user"
    reason: str | None = None
