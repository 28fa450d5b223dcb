"""Request and response shapes of the memory API (msgspec: strict, unknown fields rejected).

The constraints declared here are enforced on decoding and written into the OpenAPI document.
"""

from __future__ import annotations

import base64
import binascii
import json
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

NO_NUL = "^[^\x00]*$"
"""PostgreSQL text cannot hold U+0000: a value with one would fail in the database, not here."""

MAX_ID = 2**63 - 1
"""Ids are PostgreSQL bigints; a larger one would fail in the driver."""

PUBLIC_ID_DOC = (
    "The memory's id: random in [1, 2^53), an exact number in JavaScript. It is not a counter: it "
    "says nothing about when the memory was stored nor about anyone else's memories."
)

Importance = Annotated[float, Meta(ge=0.0, le=1.0, description="0 (trivial) .. 1 (critical)")]
CATEGORY: dict[str, Any] = {"min_length": 1, "max_length": 64, "pattern": NO_NUL}
"""A category's limits: `Category` in bodies, and in the query string (where Litestar reads them
from a `QueryParameter`: it drops a msgspec `Meta` inside an optional parameter's type)."""
Category = Annotated[str, Meta(**CATEGORY)]
Text = Annotated[str, Meta(pattern=NO_NUL)]
MemoryKind = Literal["memory", "episode"]


def in_utc(value: datetime) -> datetime:
    """`value` as an aware UTC datetime (a zone-less one is UTC); ValueError when UTC cannot hold it.

    `0001-01-01T00:00:00+14:00` is a valid timestamp whose UTC instant falls in year 0, which
    Python (and so the driver) cannot represent.
    """
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"{value.isoformat()} is outside years 1-9999 once converted to UTC") from None


class Timestamp(datetime):
    """An RFC 3339 timestamp read from a query string (`2024-05-01T12:00:00Z`), in UTC.

    Query strings are converted leniently, which would read `created_since=0.5` as a Unix time;
    this type reads only RFC 3339 text, and only instants that UTC can hold.
    """

    @classmethod
    def from_query(cls, value: object) -> Timestamp:
        if not isinstance(value, str):
            raise ValueError("expected one RFC 3339 timestamp, e.g. 2024-05-01T12:00:00Z")
        try:
            parsed = in_utc(msgspec.convert(value, datetime))
        except msgspec.ValidationError:
            raise ValueError(
                f"{value[:40]!r} is not an RFC 3339 timestamp, e.g. 2024-05-01T12:00:00Z"
            ) from None
        return cls.combine(parsed.date(), parsed.timetz())

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        return {"type": "string", "format": "date-time"}


class Cursor(str):
    """A page cursor as this API hands it out (`next_cursor`): checked whole before it reaches SQL.

    It is base64url of `[created_at, id]` (the public id of the page's last memory; the database
    orders memories stored together by the internal id it looks up); a forged one could carry an id
    above the bigint range or an instant UTC cannot hold, which failed in the driver (500) instead
    of here (422).
    """

    __slots__ = ()

    @classmethod
    def from_query(cls, value: object) -> Cursor:
        if not isinstance(value, str):
            raise ValueError("expected one cursor")
        try:
            raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
            stamp, memory_id = json.loads(raw)
            in_utc(datetime.fromisoformat(stamp))
        except (binascii.Error, ValueError, TypeError, UnicodeDecodeError, RecursionError):
            raise ValueError("cursor is not a value returned by this API") from None
        if type(memory_id) is not int or not 1 <= memory_id <= MAX_ID:
            raise ValueError("cursor is not a value returned by this API")
        return cls(value)

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        return {"type": "string", "description": "`next_cursor` of the previous page"}


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
    pinned: bool = False
    """Pinned memories come first in the context a session starts with."""
    valid_from: datetime | None = None
    """When what it says starts to hold (null: from when it is stored); before then, recall and
    session start leave it out unless asked `as_of` a later time."""
    valid_to: datetime | None = None
    """When what it says stops holding (null: it still does); a supersede sets it on the older memory."""
    supersedes: Annotated[list[Annotated[int, Meta(ge=1, le=MAX_ID)]], Meta(max_length=10)] = msgspec.field(
        default_factory=list
    )
    """Ids of memories of the same namespace this one replaces: they leave recall, hooks and session
    start (unless asked for with `include_superseded`), and stop holding when this one starts."""


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
    pinned: bool | UnsetType = UNSET
    valid_from: datetime | UnsetType | None = UNSET
    valid_to: datetime | UnsetType | None = UNSET


class PromoteIn(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """What a promotion sets besides the kind; absent or `null` fields: an episode's importance
    becomes at least 0.5, the rest stays as it is."""

    importance: Importance | None = None
    pinned: bool | None = None
    category: Category | None = None
    tags: list[str] | None = None


class SupersedeSuggestion(msgspec.Struct, kw_only=True):
    """An older memory the stored one looks like it replaces, which the supersede rule was not sure
    enough to link: link it (`supersedes`) if it is so."""

    id: Annotated[int, Meta(description=PUBLIC_ID_DOC)]
    content: str
    """The start of its content."""
    reason: str
    """What the rule saw (the values that changed, how similar the two are)."""


class StoreResult(msgspec.Struct, kw_only=True):
    id: Annotated[int, Meta(description=PUBLIC_ID_DOC)]
    namespace: str
    duplicate: bool
    embedded: bool
    superseded: list[int] = msgspec.field(default_factory=list)
    """The memories this one supersedes now (`supersedes`, and the supersede rule's confident finds)."""
    supersede_suggestions: list[SupersedeSuggestion] = msgspec.field(default_factory=list)
    """Older memories this one looks like it replaces, not linked (the rule was not sure)."""


class StoreBatchResult(msgspec.Struct, kw_only=True):
    results: list[StoreResult]


class Memory(msgspec.Struct, kw_only=True):
    id: Annotated[int, Meta(description=PUBLIC_ID_DOC)]
    namespace: str
    content: str
    category: str | None
    tags: list[str]
    importance: float
    expanded_keywords: str | None
    is_sensitive: bool
    has_secrets: bool
    """Its text holds credential placeholders (`[secret:github-token#1]`); the owner reads the
    originals, when a key kept them, at `GET /v1/memories/{id}/secrets`."""
    source: str | None
    metadata: dict[str, Any]
    embedding_model: str | None
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None
    kind: MemoryKind
    """`memory`: curated (stored by a person or an agent); `episode`: an exchange captured from a
    session, which expires unless recalled or promoted."""
    pinned: bool
    expires_at: datetime | None
    """When the expiry job deletes this episode (null: never)."""
    seen_count: int = 1
    """How many captured exchanges this episode stands for: 1, plus each repeat folded into it."""
    last_seen_at: datetime | None = None
    """When the last repeat folded into it happened (null: none yet)."""
    valid_from: datetime | None = None
    """When what it says starts to hold (null: from `created_at`)."""
    valid_to: datetime | None = None
    """When what it says stopped holding (null: it still does)."""
    superseded_by: int | None = None
    """The memory that replaces this one (null: none does): recall shows that one instead."""


class MemoryPage(msgspec.Struct, kw_only=True):
    items: list[Memory]
    next_cursor: str | None


class SecretOriginal(msgspec.Struct, kw_only=True):
    placeholder: str
    """As it appears in the memory's text: `[secret:github-token#1]`."""
    kind: str
    number: int
    original: str


class MemorySecrets(msgspec.Struct, kw_only=True):
    """The originals of a memory's credential placeholders, for its owner."""

    memory_id: int
    secrets: list[SecretOriginal]
    originals_kept: bool
    """False when some placeholder of the memory has no original kept (`not_kept`)."""
    not_kept: list[str]
    """Placeholders the memory holds whose original is kept nowhere: redacted while no encryption
    key was configured (nothing is kept then), or typed as placeholders by the client."""
    detail: str | None = None
    """Why `not_kept` is not empty, in words."""
