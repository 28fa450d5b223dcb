"""The authentication section: rate limits per API key and per client address's failed attempts."""

from __future__ import annotations

import ipaddress

from pydantic import Field, field_validator

from app.core.settings import Section


class AuthSettings(Section):
    """Token buckets kept in PostgreSQL (`rate_limits`), so every replica counts against one limit.

    A key's bucket holds `key_burst` requests and refills at `key_requests_per_s`; an address's
    failed-authentication bucket holds `failed_auth_burst` failures and refills at
    `failed_auth_per_minute`. An address whose bucket is empty gets 429 for every request, a valid
    key's too, until it refills: were valid keys let through, 429-or-200 would tell a guess apart.
    """

    rate_limits: bool = Field(default=True, description="False turns every rate limit off.")
    key_requests_per_s: float = Field(
        default=20.0,
        ge=0,
        le=1_000_000,
        description="Sustained requests per second one API key may make (0: no per-key limit).",
    )
    key_burst: int = Field(
        default=200, ge=1, le=1_000_000, description="Requests a key may make at once after a pause."
    )
    failed_auth_per_minute: float = Field(
        default=10.0,
        ge=0,
        le=1_000_000,
        description="Failed authentications per minute one client address may make before it is "
        "refused with 429 (0: no limit). IPv6 addresses count by their /64.",
    )
    failed_auth_burst: int = Field(
        default=10, ge=1, le=1_000_000, description="Failed authentications an address may make at once."
    )
    key_cache_ttl_s: float = Field(
        default=5.0,
        ge=0,
        le=300,
        description="Seconds a replica trusts an API key PostgreSQL has verified without asking again "
        "(never past the key's expiry): a revoked key stops working within this bound on every "
        "replica. Its requests still count against the key's one rate limit, taken from it a few at "
        "a time. 0: every request asks PostgreSQL.",
    )
    sweep_interval_s: float = Field(
        default=10.0,
        gt=0,
        le=3600,
        description="How often a replica deletes idle buckets (a full bucket is the same as none).",
    )
    sweep_batch: int = Field(
        default=1000,
        ge=1,
        le=100_000,
        description="Most idle buckets one sweep deletes; a full batch makes the next sweep due at once.",
    )

    trusted_proxies: list[str] = Field(
        default_factory=list,
        description="Addresses or networks (10.0.0.0/8) of proxies in front of the API, such as an "
        "ingress controller: a request from one of them counts against the address it names in "
        "X-Forwarded-For. Empty (the default): the peer address counts, and one client behind a "
        "shared proxy would lock out everyone behind it.",
    )

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, proxies: list[str]) -> list[str]:
        for proxy in proxies:
            try:
                ipaddress.ip_network(proxy, strict=False)
            except ValueError:
                raise ValueError(f"{proxy!r} is not an IP address or network (e.g. 10.0.0.0/8)") from None
        return proxies

    @property
    def key_rate(self) -> float | None:
        """Tokens per second of a key's bucket; None when keys are not limited."""
        return self.key_requests_per_s if self.rate_limits and self.key_requests_per_s > 0 else None

    @property
    def failure_rate(self) -> float | None:
        """Tokens per second of an address's failure bucket; None when failures are not limited."""
        per_minute = self.failed_auth_per_minute
        return per_minute / 60.0 if self.rate_limits and per_minute > 0 else None

    @property
    def idle_after_s(self) -> float:
        """Seconds after which an untouched bucket has refilled whatever it held: deleting it then
        changes no answer (a missing bucket starts full)."""
        spans = [
            (burst + 1) / rate
            for rate, burst in ((self.key_rate, self.key_burst), (self.failure_rate, self.failed_auth_burst))
            if rate is not None
        ]
        return max(spans, default=0.0)
