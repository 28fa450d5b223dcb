"""The background job queue: how many loops work it, how often they look, how failures back off."""

from __future__ import annotations

from typing import Self

from pydantic import Field, model_validator

from app.core.settings import Section


class JobSettings(Section):
    workers: int = Field(
        default=2,
        ge=0,
        le=32,
        description="job loops in this process (0: it only enqueues; another replica works the queue)",
    )
    poll_interval_s: float = Field(
        default=1.0,
        gt=0,
        le=60,
        description="how often an idle loop looks for due jobs (an enqueue in this process wakes it at once)",
    )
    batch_size: int = Field(default=32, ge=1, le=1000, description="jobs one loop claims and runs together")
    max_attempts: int = Field(
        default=10,
        ge=1,
        le=1000,
        description="runs of a job before it is left `failed` (recorded, not retried)",
    )
    backoff_base_s: float = Field(
        default=2.0, gt=0, description="wait after the first failure; doubles with every further one"
    )
    backoff_cap_s: float = Field(default=300.0, gt=0, description="longest wait between two runs of a job")
    lease_s: float = Field(
        default=120.0,
        ge=1,
        description="a claimed job not finished within this is handed out again (its worker died or hung)",
    )
    stop_timeout_s: float = Field(
        default=10.0, ge=0, description="on shutdown, how long running jobs may take to finish"
    )

    @model_validator(mode="after")
    def _cap_covers_base(self) -> Self:
        if self.backoff_cap_s < self.backoff_base_s:
            raise ValueError("backoff_cap_s must be at least backoff_base_s")
        return self

    def retry_delay_s(self, attempts: int) -> float:
        """Seconds to wait after the `attempts`-th failed run: base, 2·base, 4·base, … up to the cap."""
        return min(self.backoff_cap_s, self.backoff_base_s * 2.0 ** min(max(attempts - 1, 0), 62))
