"""`/metrics`: who may scrape it."""

from __future__ import annotations

from pydantic import Field, SecretStr

from app.core.settings import Section


class MetricsSettings(Section):
    token: SecretStr | None = Field(
        default=None,
        min_length=16,
        description="bearer token a scraper sends to GET /metrics (`Authorization: Bearer <token>`); "
        "unset: /metrics is not served",
    )
