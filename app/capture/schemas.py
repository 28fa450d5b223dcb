"""Request and response shapes of `POST /v1/capture/claude-code` (msgspec: strict, unknown fields
rejected; the bounds declared here are enforced on decoding and written into the OpenAPI document).

The exchange count is bounded by settings (`MEMORIA_CAPTURE__MAX_EXCHANGES`), which the service
checks; everything else is fixed here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec
from msgspec import Meta

from app.memories.schemas import NO_NUL, PUBLIC_ID_DOC, in_utc

MAX_TEXT_CHARS = 100_000
MAX_DIGEST_ITEMS = 50
MAX_DIGEST_ITEM_CHARS = 500

SessionId = Annotated[
    str, Meta(min_length=1, max_length=200, pattern=NO_NUL, description="Claude Code's session id")
]
Turn = Annotated[int, Meta(ge=0, le=2**31 - 1, description="The exchange's index in its session, from 0")]
Said = Annotated[str, Meta(max_length=MAX_TEXT_CHARS)]
DigestItem = Annotated[str, Meta(max_length=MAX_DIGEST_ITEM_CHARS)]
DigestList = Annotated[list[DigestItem], Meta(max_length=MAX_DIGEST_ITEMS)]


class Digest(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """What the exchange's tool calls did, deterministically (never their verbatim input/output)."""

    files_touched: DigestList = msgspec.field(default_factory=list)
    files_read: DigestList = msgspec.field(default_factory=list)
    commands: DigestList = msgspec.field(default_factory=list)
    errors: DigestList = msgspec.field(default_factory=list)
    subagents: DigestList = msgspec.field(default_factory=list)


class Exchange(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """One user prompt and the assistant's final text reply, as the capture hook read them."""

    session_id: SessionId
    turn: Turn
    prompt: Said = ""
    reply: Said = ""
    started_at: datetime | None = None
    """The prompt's transcript timestamp: the episode's `created_at` (absent: now)."""
    ended_at: datetime | None = None
    cwd: Annotated[str, Meta(max_length=4096)] | None = None
    git_branch: Annotated[str, Meta(max_length=500)] | None = None
    hook_event: Annotated[str, Meta(max_length=100)] | None = None
    digest: Digest = msgspec.field(default_factory=Digest)

    def __post_init__(self) -> None:
        # instants only: as UTC, and only those UTC can hold (else the driver fails: 500)
        if self.started_at is not None:
            self.started_at = in_utc(self.started_at)
        if self.ended_at is not None:
            self.ended_at = in_utc(self.ended_at)


class CaptureRequest(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    exchanges: Annotated[list[Exchange], Meta(min_length=1, max_length=1000)]
    """At most `MEMORIA_CAPTURE__MAX_EXCHANGES` (200 by default); 1000 is the ceiling of that setting."""


class CapturedExchange(msgspec.Struct, kw_only=True):
    session_id: str
    turn: int
    ids: list[Annotated[int, Meta(description=PUBLIC_ID_DOC)]]
    """The episodes holding the exchange (one per chunk); for a duplicate, the memories that hold it."""
    duplicate: bool
    """Captured before (same session and turn), or its text is a live memory of the namespace already."""
    folded: bool = False
    """It repeats an episode of the namespace (the same prompt and reply, once normalised): counted
    as one more sighting of that episode (`ids`, its `seen_count`) instead of stored."""


class CaptureResult(msgspec.Struct, kw_only=True):
    stored: int
    """Exchanges stored now."""
    duplicates: int
    """Exchanges captured before: not stored again."""
    folded: int
    """Exchanges that repeated an episode and were counted into it instead of stored."""
    skipped: int
    """Exchanges with nothing to remember (see `skipped_reasons`), or every exchange when capture
    is disabled."""
    skipped_reasons: dict[str, int]
    """How many were skipped for each reason: `empty` (no text once private spans are out),
    `greeting`, `api-error`, `interrupted`, `permission-refused`, `progress-only`, `unanswered`
    (the skip rules, in the docs' Capture page), `disabled`. Reasons that skipped none are left out."""
    results: list[CapturedExchange]
    """One per exchange not skipped, in the order sent."""
