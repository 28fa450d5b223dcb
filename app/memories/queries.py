"""The typed arguments of the memory domain's named queries (`memories.sql`), one class per query.

Each class names its query and binds it: one field per `:name` parameter, in the order the query
first uses them (app/db/queries.py numbers them by that order). `tests/test_memories_queries.py`
holds each class to its query: the same names in the same order, each field of the Python type
PostgreSQL infers for its parameter. Batches bind one list per column (unnested into rows).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from pgvector import HalfVector

from app.db.queries import NamedQuery

FILE = ("app.memories", "memories.sql")


class _MemoriesQuery(NamedQuery):
    SQL_FILE: ClassVar[tuple[str, str]] = FILE


@dataclass(frozen=True, slots=True, kw_only=True)
class ExistingHashes(_MemoriesQuery):
    QUERY = "existing_hashes"
    namespace_ids: list[int]
    content_hashes: list[bytes]


@dataclass(frozen=True, slots=True, kw_only=True)
class InsertMemories(_MemoriesQuery):
    QUERY = "insert_memories"
    namespace_ids: list[int]
    content_hashes: list[bytes]
    contents: list[str]
    categories: list[str | None]
    tags_json: list[str]
    importances: list[float]
    expanded_keywords: list[str | None]
    sensitive: list[bool]
    sources: list[str | None]
    metadata: list[dict[str, Any]]
    embeddings: list[HalfVector | None]
    embedding_models: list[str | None]
    has_secrets: list[bool]
    pinned: list[bool]
    valid_froms: list[datetime | None]
    valid_tos: list[datetime | None]


@dataclass(frozen=True, slots=True, kw_only=True)
class InsertEpisodes(_MemoriesQuery):
    QUERY = "insert_episodes"
    namespace_ids: list[int]
    content_hashes: list[bytes]
    contents: list[str]
    categories: list[str | None]
    tags_json: list[str]
    importances: list[float]
    expanded_keywords: list[str | None]
    sensitive: list[bool]
    sources: list[str | None]
    metadata: list[dict[str, Any]]
    has_secrets: list[bool]
    expires_at: list[datetime | None]
    capture_keys: list[str]
    created_at: list[datetime | None]


@dataclass(frozen=True, slots=True, kw_only=True)
class Captured(_MemoriesQuery):
    QUERY = "captured"
    namespace_ids: list[int]
    capture_keys: list[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveByHashes(_MemoriesQuery):
    QUERY = "live_by_hashes"
    namespace_ids: list[int]
    content_hashes: list[bytes]


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveIdByHash(_MemoriesQuery):
    QUERY = "live_id_by_hash"
    namespace_id: int
    content_hash: bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class GetMemory(_MemoriesQuery):
    QUERY = "get_memory"
    user_id: int
    public_id: int
    include_deleted: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ListMemories(_MemoriesQuery):
    QUERY = "list_memories"
    after_public_id: int | None
    user_id: int
    namespace_ids: list[int] | None
    category: str | None
    source: str | None
    tags: list[str] | None
    tags_match_all: bool
    created_since: datetime | None
    created_until: datetime | None
    include_sensitive: bool
    include_deleted: bool
    after_created_at: datetime | None
    kind: str | None
    pinned: bool | None
    include_superseded: bool
    as_of: datetime | None
    limit: int


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveNamespace(_MemoriesQuery):
    QUERY = "live_namespace"
    user_id: int
    public_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class LockMemory(_MemoriesQuery):
    QUERY = "lock_memory"
    memory_id: int
    user_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateMemory(_MemoriesQuery):
    """A change: `set_<field>` says a nullable field is set (to its value, None included); any
    other field left None keeps its stored value."""

    QUERY = "update_memory"
    content: str | None
    content_hash: bytes | None
    set_embedding: bool
    embedding: HalfVector | None
    embedding_model: str | None
    set_category: bool
    category: str | None
    tags: list[str] | None
    importance: float | None
    promote: bool
    set_expanded_keywords: bool
    expanded_keywords: str | None
    is_sensitive: bool | None
    set_source: bool
    source: str | None
    metadata: dict[str, Any] | None
    has_secrets: bool
    pinned: bool | None
    set_valid_from: bool
    valid_from: datetime | None
    set_valid_to: bool
    valid_to: datetime | None
    memory_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class LockedText(_MemoriesQuery):
    QUERY = "locked_text"
    memory_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class OwnedLiveText(_MemoriesQuery):
    QUERY = "owned_live_text"
    public_id: int
    user_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditRead(_MemoriesQuery):
    QUERY = "audit_read"
    memory_id: int
    user_id: int
    key_id: int | None
    secrets: int
    client: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ScanBatch(_MemoriesQuery):
    QUERY = "scan_batch"
    after_id: int
    limit: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ScanLock(_MemoriesQuery):
    QUERY = "scan_lock"
    memory_ids: list[int]


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveTwin(_MemoriesQuery):
    QUERY = "live_twin"
    namespace_id: int
    content_hash: bytes
    memory_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RedactStored(_MemoriesQuery):
    QUERY = "redact_stored"
    content: str
    category: str | None
    tags: list[str]
    expanded_keywords: str | None
    source: str | None
    metadata: dict[str, Any]
    content_hash: bytes
    duplicate: bool
    memory_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class OwnedNamespace(_MemoriesQuery):
    QUERY = "owned_namespace"
    user_id: int
    public_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class LockOwnedMemory(_MemoriesQuery):
    QUERY = "lock_owned_memory"
    memory_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SoftDelete(_MemoriesQuery):
    QUERY = "soft_delete"
    memory_id: int
    user_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Restore(_MemoriesQuery):
    QUERY = "restore"
    memory_id: int
    user_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveClash(_MemoriesQuery):
    QUERY = "live_clash"
    memory_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Purge(_MemoriesQuery):
    QUERY = "purge"
    memory_id: int
    user_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class InternalIds(_MemoriesQuery):
    QUERY = "internal_ids"
    public_ids: list[int]


QUERIES: tuple[type[NamedQuery], ...] = (
    ExistingHashes,
    InsertMemories,
    InsertEpisodes,
    Captured,
    LiveByHashes,
    LiveIdByHash,
    GetMemory,
    ListMemories,
    LiveNamespace,
    LockMemory,
    UpdateMemory,
    LockedText,
    OwnedLiveText,
    AuditRead,
    ScanBatch,
    ScanLock,
    LiveTwin,
    RedactStored,
    OwnedNamespace,
    LockOwnedMemory,
    SoftDelete,
    Restore,
    LiveClash,
    Purge,
    InternalIds,
)
"""Every query of `memories.sql`, for the test that holds them to their arguments."""
