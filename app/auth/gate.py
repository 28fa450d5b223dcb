"""Who is asking, and may they: the statement an authenticated request runs, when it runs one.

`Gate.admit` looks the key up, applies the key's rate limit and the address's failed-authentication
limit, and notes the key's last use, in one round trip (`sql.AUTHENTICATE`), as the bare key lookup
did before. The buckets live in PostgreSQL, so every replica counts against the same limits. A key
verified a moment ago is trusted without asking again (`app.auth.key_cache`): its requests are then
taken from its bucket a lease at a time (`sql.LEASE`): most requests make no round trip at all.
`Gate.sweep_if_due` deletes idle buckets now and then, inline and bounded, so the table does not
grow with every key and address ever seen.
"""

from __future__ import annotations

import ipaddress
import logging
import time
from collections.abc import Sequence

import asyncpg
from litestar.exceptions import NotAuthorizedException

from app.auth import sql
from app.auth.key_cache import VerifiedKey, VerifiedKeys
from app.auth.keys import hash_key
from app.auth.service import AuthUser
from app.auth.settings import AuthSettings
from app.core.metrics import RateLimitMetrics
from app.errors import TooManyRequests

log = logging.getLogger(__name__)

LAST_USED_RESOLUTION_S = 60.0
"""`api_keys.last_used_at` is written at most this often per key."""

UNKNOWN_KEY = "invalid, revoked or expired API key"
"""One answer for every key that does not work: which of the three it is would tell a guesser or a
thief more than it helps the owner, who sees expiry and revocation in `memoria keys list`."""

_MAX_ADDRESS_CHARS = 150

KEY_LEASE = 10
"""Requests a replica takes from a trusted key's bucket per round trip (fewer when the burst is smaller).
Leased requests a replica does not make before it asks again are spent all the same: with the
default limits that is at most 10 of 200 per key and replica every `key_cache_ttl_s`."""


def address_bucket(host: str | None) -> str:
    """The failed-authentication bucket of a client address. An IPv6 client counts by its /64 (one
    host usually holds a whole /64, so per-address buckets would not limit it); an IPv4-mapped IPv6
    address counts as its IPv4 address."""
    if not host:
        return f"{sql.ADDRESS_BUCKET_PREFIX}unknown"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:  # not an IP (a unix socket, a test client): the name as given
        return f"{sql.ADDRESS_BUCKET_PREFIX}{host[:_MAX_ADDRESS_CHARS]}"
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return f"{sql.ADDRESS_BUCKET_PREFIX}{address.ipv4_mapped}"
        return f"{sql.ADDRESS_BUCKET_PREFIX}{ipaddress.IPv6Network((address, 64), strict=False)}"
    return f"{sql.ADDRESS_BUCKET_PREFIX}{address}"


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class KeyRateLimited(TooManyRequests):
    """The key is valid and has used up its requests (its user is known, its scopes were not checked)."""


class AddressLockedOut(TooManyRequests):
    """The client's address has used up its failed authentications; the key was not looked up."""


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip())
    except ValueError:
        return None


def client_address(peer: str | None, forwarded_for: list[str], trusted: Sequence[Network]) -> str | None:
    """The address a request counts against: the peer's, or, when the peer is a trusted proxy, the
    right-most address of `X-Forwarded-For` that is not a trusted proxy (the ones left of it are
    whatever the client chose to send)."""
    peer_ip = _ip(peer) if peer else None
    if peer_ip is None or not any(peer_ip in network for network in trusted):
        return peer
    hops = [hop for header in forwarded_for for hop in header.split(",")]
    for hop in reversed(hops):
        hop_ip = _ip(hop)
        if hop_ip is None:
            return peer  # a hop we cannot read: count the proxy rather than trust what is left of it
        if not any(hop_ip in network for network in trusted):
            return str(hop_ip)
    return peer


class Gate:
    """Authentication with rate limits, shared by the `/v1` key middleware and the hook route."""

    def __init__(self, settings: AuthSettings, metrics: RateLimitMetrics | None = None) -> None:
        self._settings = settings
        self._metrics = metrics if metrics is not None else RateLimitMetrics()
        self._verified = VerifiedKeys(settings.key_cache_ttl_s)
        self._lease = float(max(1, min(KEY_LEASE, settings.key_burst)))
        self._next_sweep = 0.0
        self._trusted = [ipaddress.ip_network(p, strict=False) for p in settings.trusted_proxies]

    def client(self, peer: str | None, forwarded_for: list[str]) -> str | None:
        """The client address of a request from `peer` with these `X-Forwarded-For` headers."""
        return client_address(peer, forwarded_for, self._trusted) if self._trusted else peer

    async def admit(
        self, pool: asyncpg.Pool | asyncpg.Connection, key: str, client: str | None, *, fresh: bool = False
    ) -> AuthUser:
        """The user `key` acts for. 401 for a key that does not work; 429 (`TooManyRequests`) when
        the key has used up its requests, or when `client`'s address has used up its failed
        authentications (then the key is not looked up). The lookup acquires from `pool`, so it
        waits no longer than the request's deadline (`app.db.pool.BoundedPool`). A key verified
        within `key_cache_ttl_s` is not looked up again unless `fresh` (what an admin-only answer
        asks for: a revoked admin key loses it at once)."""
        key_hash, bucket = hash_key(key), address_bucket(client)
        if not fresh and not self._verified.failing(bucket):
            trusted = self._verified.get(key_hash)
            if trusted is not None and await self._spend(pool, trusted):
                return trusted.user
        return await self._authenticate(pool, key_hash, bucket)

    async def admit_session(self, pool: asyncpg.Pool | asyncpg.Connection, user: AuthUser) -> None:
        """Count one request of a signed-in web UI session against its key's rate limit, which the
        key's API requests share: 429 (`KeyRateLimited`) when the key has used up its requests. A
        page is no hot path: one round trip, no lease."""
        rate = self._settings.key_rate
        if rate is None:
            return
        bucket = f"{sql.KEY_BUCKET_PREFIX}{user.key_id}"
        tokens = await pool.fetchval(sql.TAKE, bucket, rate, float(self._settings.key_burst))
        if tokens < 0:
            raise self._key_limited(-tokens / rate)

    def _key_limited(self, retry_after_s: float) -> KeyRateLimited:
        self._metrics.limited("key")
        settings = self._settings
        return KeyRateLimited(
            f"this API key made more than {settings.key_burst} requests at once or "
            f"{settings.key_requests_per_s:g} per second",
            retry_after_s=retry_after_s,
        )

    async def _spend(self, pool: asyncpg.Pool | asyncpg.Connection, trusted: VerifiedKey) -> bool:
        """Count one request of a trusted key: from its lease, or from a new one taken from its
        bucket. False when the bucket holds less than a lease: the caller authenticates afresh."""
        rate = self._settings.key_rate
        if rate is None:
            return True
        if trusted.tokens < 1:
            async with trusted.leasing:
                if trusted.tokens < 1:  # not refilled by the lease this request waited for
                    bucket = f"{sql.KEY_BUCKET_PREFIX}{trusted.user.key_id}"
                    burst = float(self._settings.key_burst)
                    if await pool.fetchval(sql.LEASE, bucket, rate, burst, self._lease) is None:
                        return False
                    trusted.tokens += self._lease
        trusted.tokens -= 1
        return True

    async def _authenticate(
        self, pool: asyncpg.Pool | asyncpg.Connection, key_hash: bytes, bucket: str
    ) -> AuthUser:
        """`admit` by asking PostgreSQL (`sql.AUTHENTICATE`): one token taken, the key remembered."""
        settings = self._settings
        key_rate, failure_rate = settings.key_rate, settings.failure_rate
        row = await pool.fetchrow(
            sql.AUTHENTICATE,
            key_hash,
            bucket,
            key_rate,
            float(settings.key_burst),
            failure_rate,
            float(settings.failed_auth_burst),
            LAST_USED_RESOLUTION_S,
        )
        assert row is not None  # the statement always answers one row
        if row["locked_out_tokens"] is not None and failure_rate is not None:
            self._metrics.limited("address")
            self._note_failures(bucket, row["locked_out_tokens"], failure_rate)
            raise _locked_out((1.0 - row["locked_out_tokens"]) / failure_rate)
        if row["user_id"] is None:
            failures = row["failure_tokens"]
            if failures is not None and failure_rate is not None:
                self._note_failures(bucket, failures + 1 if failures < 0 else failures, failure_rate)
                if failures < 0:
                    self._metrics.limited("address")
                    raise _locked_out(-failures / failure_rate)
            raise NotAuthorizedException(UNKNOWN_KEY)
        tokens = row["key_tokens"]
        if tokens is not None and tokens < 0 and key_rate is not None:
            raise self._key_limited(-tokens / key_rate)
        user = AuthUser(row["user_id"], row["name"], row["key_id"], frozenset(row["scopes"]))
        self._verified.remember(key_hash, user, row["expires_in_s"])
        return user

    def _note_failures(self, bucket: str, tokens: float, rate: float) -> None:
        """An address whose failure bucket holds `tokens`: every request from it asks PostgreSQL,
        trusted key or not, until the bucket is full again (then its failures no longer count)."""
        self._verified.failing_for(bucket, (self._settings.failed_auth_burst - tokens) / rate)

    async def sweep_if_due(self, pool: asyncpg.Pool | asyncpg.Connection) -> int:
        """Delete idle buckets when this process's sweep is due (every `sweep_interval_s`; at once
        again after a full batch, so a flood of new addresses is caught up with). Bounded: one
        DELETE of at most `sweep_batch` rows, awaited by the request that found it due. A failure is
        logged, never the request's: the buckets wait for the next sweep."""
        settings = self._settings
        now = time.monotonic()
        if now < self._next_sweep or not settings.rate_limits:
            return 0
        self._next_sweep = now + settings.sweep_interval_s  # before the await: one sweep at a time
        try:
            status = await pool.execute(sql.SWEEP, settings.idle_after_s, settings.sweep_batch)
        except Exception as exc:
            log.warning("sweeping idle rate-limit buckets failed: %r", exc)
            return 0
        deleted = int(status.rsplit(" ", 1)[-1])
        if deleted >= settings.sweep_batch:
            self._next_sweep = now
        return deleted


def _locked_out(retry_after_s: float) -> AddressLockedOut:
    return AddressLockedOut(
        "too many failed authentications from this address; wait before trying again",
        retry_after_s=retry_after_s,
    )
