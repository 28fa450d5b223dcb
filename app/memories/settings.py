"""Limits every memory write is checked against."""

from __future__ import annotations

from pydantic import Field

from app.core.settings import Section
from app.core.validation import TagLimits


class MemorySettings(Section):
    max_content_chars: int = Field(
        default=4000,
        ge=1,
        le=100_000,
        description="Longest memory content; longer is a 422 (memories are short).",
    )
    max_tags: int = Field(default=32, ge=0, description="Most tags on one memory.")
    max_tag_chars: int = Field(default=64, ge=1, description="Longest tag.")
    max_batch: int = Field(
        default=100, ge=1, le=1000, description="Most memories one store request may carry."
    )
    max_keywords_chars: int = Field(default=2000, ge=0, description="Longest `expanded_keywords` text.")
    # Metadata is free-form JSON stored beside every memory: without a limit one memory could carry
    # the whole request body (1 MB) while its content is capped at 4,000 characters.
    max_metadata_bytes: int = Field(
        default=16 * 1024,
        ge=2,
        le=1024 * 1024,
        description="Largest `metadata`, in bytes of compact JSON, on store and PATCH.",
    )
    max_metadata_depth: int = Field(
        default=16, ge=1, le=64, description="Deepest nesting of `metadata` (the object itself is level 1)."
    )
    # Episodes (captured exchanges) go after this long unless recalled (which pushes it back) or
    # promoted to curated memories (which clears it); a background job deletes them.
    episode_ttl_days: float = Field(
        default=30.0,
        gt=0,
        le=36_500,
        description="How long a captured episode lives unless recalled or promoted.",
    )
    # The expiry job deletes at most this many expired episodes per run (one short transaction), and
    # runs again at once while it finds full batches, else after the interval.
    expiry_batch: int = Field(
        default=500,
        ge=1,
        le=10_000,
        description="Most expired episodes the expiry job deletes in one transaction.",
    )
    expiry_interval_s: float = Field(
        default=600.0,
        gt=0,
        le=86_400,
        description="Pause between expiry runs once a run finds no full batch.",
    )

    @property
    def tag_limits(self) -> TagLimits:
        return TagLimits(self.max_tags, self.max_tag_chars)
