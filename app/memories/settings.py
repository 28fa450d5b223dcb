"""Limits every memory write is checked against."""

from __future__ import annotations

from pydantic import Field

from app.core.settings import Section
from app.core.validation import TagLimits


class MemorySettings(Section):
    max_content_chars: int = Field(default=4000, ge=1, le=100_000)
    max_tags: int = Field(default=32, ge=0)
    max_tag_chars: int = Field(default=64, ge=1)
    max_batch: int = Field(default=100, ge=1, le=1000)
    max_keywords_chars: int = Field(default=2000, ge=0)
    # Metadata is free-form JSON stored beside every memory: without a limit one memory could carry
    # the whole request body (1 MB) while its content is capped at 4,000 characters.
    max_metadata_bytes: int = Field(default=16 * 1024, ge=2, le=1024 * 1024)
    max_metadata_depth: int = Field(default=16, ge=1, le=64)

    @property
    def tag_limits(self) -> TagLimits:
        return TagLimits(self.max_tags, self.max_tag_chars)
