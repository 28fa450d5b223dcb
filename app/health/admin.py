"""Who may read `/readyz` details: a key with the `admin` scope, checked within the probe's budget
by the same gate as `/v1` (`app.auth.gate`: a bad key counts against the address's failed attempts).

The details (database reachable or hung, migration revision, embedder, warm-up) tell an operator
what is wrong, and tell anyone else how the deployment is built and when it is weak, so they are for
admin keys only. They matter most when the database is down or hung, which is exactly when the key
cannot be looked up: so a key the database confirmed as admin is remembered for a while
(`RecentAdmins`), and is believed only while the database cannot answer. Whenever the database does
answer, its word is final: a revoked or demoted key loses the details at once.
"""

from __future__ import annotations

import time

import asyncpg
from litestar.exceptions import NotAuthorizedException

from app.auth.gate import Gate
from app.auth.keys import hash_key
from app.auth.scopes import ADMIN
from app.core import deadline
from app.errors import TooManyRequests

REMEMBER_ADMIN_S = 600.0
"""How long a confirmed admin key still gets details while the database cannot confirm it again."""
MAX_REMEMBERED = 64
"""A bound on the memory: only admin keys the database confirmed are kept, so this is never reached
in practice; past it the oldest is forgotten."""


class RecentAdmins:
    """Hashes of keys the database recently confirmed as admin, with when that stops counting."""

    def __init__(self) -> None:
        self._until: dict[bytes, float] = {}

    def confirmed(self, key: str) -> None:
        digest = hash_key(key)
        self._until.pop(digest, None)  # re-inserted last: the dict's order is the forgetting order
        self._until[digest] = time.monotonic() + REMEMBER_ADMIN_S
        while len(self._until) > MAX_REMEMBERED:
            del self._until[next(iter(self._until))]

    def denied(self, key: str) -> None:
        self._until.pop(hash_key(key), None)

    def remembers(self, key: str) -> bool:
        until = self._until.get(hash_key(key))
        return until is not None and time.monotonic() < until


def bearer_key(authorization: str) -> str | None:
    """The key of an `Authorization: Bearer <key>` value; None without one (the public answer)."""
    scheme, _, key = authorization.partition(" ")
    return key.strip() if scheme.lower() == "bearer" and key.strip() else None


async def is_admin(
    pool: asyncpg.Pool,
    gate: Gate,
    key: str | None,
    client: str | None,
    recent: RecentAdmins,
    limit: deadline.Deadline,
) -> bool:
    """Whether `key` has the admin scope, asked of the database within `limit` through the same gate
    as `/v1` (an unknown key counts against `client`'s failed authentications, so /readyz is no
    unthrottled place to guess keys); when the database cannot answer in time, whether it confirmed
    the key recently. Never raises: a probe whose key cannot be checked still answers, without details."""
    if key is None:
        return False
    try:
        user = await deadline.within(gate.admit(pool, key, client, fresh=True), limit)
    except NotAuthorizedException:  # unknown, revoked or expired: the database said no
        recent.denied(key)
        return False
    except TooManyRequests:  # a rate limit: no details this time, what the key is stays as it was
        return False
    except Exception:  # hung, unreachable, too busy: the database cannot say
        return recent.remembers(key)
    if ADMIN in user.scopes:
        recent.confirmed(key)
        return True
    recent.denied(key)
    return False
