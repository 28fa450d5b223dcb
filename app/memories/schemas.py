"""Request and response shapes of the memory API (msgspec: strict, unknown fields rejected)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, UnsetType

Importance = Annotated[float, Meta(ge=0.0, le=1.0, description="0 (trivial) .. 1 (critical)")]
Category = Annotated[str, Meta(min_length=1, max_length=64)]


class MemoryIn(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """One memory to store. Content limits depend on settings and are checked by the service."""

    content: str
    namespace: str = "default"
    category: Category | None = None
    tags: list[str] = msgspec.field(default_factory=list)
    importance: Importance = 0.5
    expanded_keywords: str | None = None
    is_sensitive: bool = False
    source: str | None = None
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)


class MemoryPatch(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Fields to change; absent fields stay as they are, `null` clears an optional field."""

    content: str | UnsetType = UNSET
    category: Category | UnsetType | None = UNSET
    tags: list[str] | UnsetType = UNSET
    importance: Importance | UnsetType = UNSET
    expanded_keywords: str | UnsetType | None = UNSET
    is_sensitive: bool | UnsetType = UNSET
    source: str | UnsetType | None = UNSET
    metadata: dict[str, Any] | UnsetType = UNSET


class StoreResult(msgspec.Struct, kw_only=True):
    id: int
    namespace: str
    duplicate: bool
    embedded: bool


class StoreBatchResult(msgspec.Struct, kw_only=True):
    results: list[StoreResult]


class Memory(msgspec.Struct, kw_only=True):
    id: int
    namespace: str
    content: str
    category: str | None
    tags: list[str]
    importance: float
    expanded_keywords: str | None
    is_sensitive: bool
    source: str | None
    metadata: dict[str, Any]
    embedding_model: str | None
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None


class MemoryPage(msgspec.Struct, kw_only=True):
    items: list[Memory]
    next_cursor: str | None
