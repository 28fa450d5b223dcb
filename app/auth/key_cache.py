"""Verified API keys a replica trusts for a few seconds, and the addresses it saw fail to authenticate.

Authentication was a round trip to the primary on every request, a write one (the key's bucket),
and it grew dearer with concurrency, where every request of one key updated the same bucket row.
A key PostgreSQL has just verified is trusted for
`MEMORIA_AUTH__KEY_CACHE_TTL_S` seconds (never past its own expiry): a key revoked meanwhile stops
working within that bound, on every replica. Its rate limit still counts in PostgreSQL, against the
one bucket all replicas share: a replica takes the key's next requests from it a lease at a time
(`app.auth.sql.LEASE`), so one round trip pays for `lease` requests.

Only verified keys are remembered. An unknown key always asks PostgreSQL, so guessing keys still
counts against the address's failed authentications, and every request from an address this
replica saw fail asks PostgreSQL too (valid key or not) until its failures no longer count: an
address locked out is refused whichever key it brings.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.auth.service import AuthUser

MAX_ENTRIES = 10_000
"""Keys (and failing addresses) remembered at most; past it the expired ones go, then the oldest."""


@dataclass(slots=True)
class VerifiedKey:
    user: AuthUser
    until: float
    """`time.monotonic()` after which PostgreSQL is asked again."""
    tokens: float = 0.0
    """Requests leased from the key's bucket and not yet made."""
    leasing: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Held while a lease is asked for: requests arriving meanwhile wait for it instead of each
    taking a lease of their own (forty at once would take four hundred tokens)."""


class VerifiedKeys:
    """Key hashes PostgreSQL verified less than `ttl_s` seconds ago; `ttl_s` 0 remembers none."""

    def __init__(self, ttl_s: float) -> None:
        self.ttl_s = ttl_s
        self._keys: dict[bytes, VerifiedKey] = {}
        self._failing: dict[str, float] = {}

    def get(self, key_hash: bytes) -> VerifiedKey | None:
        entry = self._keys.get(key_hash)
        if entry is not None and time.monotonic() >= entry.until:
            del self._keys[key_hash]
            return None
        return entry

    def remember(self, key_hash: bytes, user: AuthUser, expires_in_s: float | None) -> None:
        """`user`'s key, just verified; trusted for `ttl_s`, or until it expires if that is sooner."""
        if self.ttl_s <= 0:
            return
        trusted_s = self.ttl_s if expires_in_s is None else min(self.ttl_s, expires_in_s)
        if trusted_s <= 0:
            return
        _bounded(self._keys, lambda e, now: e.until <= now)
        held = self._keys.get(key_hash)
        until = time.monotonic() + trusted_s
        if held is not None:  # its lease and its lock stay: requests may wait on it right now
            held.user, held.until = user, until
        else:
            self._keys[key_hash] = VerifiedKey(user, until)

    def failing_for(self, bucket: str, for_s: float) -> None:
        """The address of `bucket` has failed authentications that count for `for_s` seconds more."""
        if self.ttl_s <= 0 or for_s <= 0:
            return
        _bounded(self._failing, lambda until, now: until <= now)
        self._failing[bucket] = max(self._failing.get(bucket, 0.0), time.monotonic() + for_s)

    def failing(self, bucket: str) -> bool:
        """Whether the address of `bucket` has failures that still count (its requests ask PostgreSQL)."""
        until = self._failing.get(bucket)
        if until is None:
            return False
        if time.monotonic() < until:
            return True
        del self._failing[bucket]
        return False


def _bounded(entries: dict[Any, Any], expired: Callable[[Any, float], bool]) -> None:
    """Make room for one more entry: drop the expired ones, then the oldest, once at MAX_ENTRIES."""
    if len(entries) < MAX_ENTRIES:
        return
    now = time.monotonic()
    for name in [name for name, value in entries.items() if expired(value, now)]:
        del entries[name]
    while len(entries) >= MAX_ENTRIES:
        del entries[next(iter(entries))]
