"""The capture section (`MEMORIA_CAPTURE__*`): what the capture route accepts and how it stores it.

How long episodes live is the memories section's (`MEMORIA_MEMORIES__EPISODE_TTL_DAYS`): an
episode is a memory, whatever stored it."""

from __future__ import annotations

from pydantic import Field

from app.core.settings import Section


class CaptureSettings(Section):
    """`POST /v1/capture/claude-code`: exchanges of a Claude Code session, sent by the capture hooks."""

    enabled: bool = Field(
        default=True, description="False: the capture route stores nothing (it answers 200 with 0 stored)."
    )
    max_exchanges: int = Field(default=200, ge=1, le=1000, description="Most exchanges in one request.")
    max_chunk_chars: int = Field(
        default=4000,
        ge=500,
        le=100_000,
        description="An exchange longer than this is stored as several episodes.",
    )
    importance: float = Field(default=0.2, ge=0, le=1, description="The importance a captured episode gets.")
