"""Web UI sessions: a browser signed in with an API key holds a random token, the server the rest.

The key is verified once, at sign-in, by the same `Gate` as every API request (rate limits and the
failed-authentication lockout included). The session row then points at the key (`ui_sessions`,
migration 0010), so every page load re-checks that the key is neither revoked nor expired, in the
one statement that finds the session: revoking a key signs its browsers out at once, everywhere.
Only the SHA-256 of the token is stored, as for API keys.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

import asyncpg

from app.auth.service import AuthUser

TOKEN_BYTES = 32

CREATE = """
WITH swept AS (DELETE FROM ui_sessions WHERE expires_at < now())
INSERT INTO ui_sessions (token_hash, key_id, csrf_token, expires_at)
VALUES ($1::bytea, $2::bigint, $3::text, now() + make_interval(secs => $4::float8))
"""

# The session with its key and user, if the session is live and its key still works.
FIND = """
SELECT u.id AS user_id, u.name, k.id AS key_id, k.scopes, s.csrf_token
FROM ui_sessions s
JOIN api_keys k ON k.id = s.key_id
JOIN users u ON u.id = k.user_id
WHERE s.token_hash = $1::bytea
  AND s.expires_at > now()
  AND k.revoked_at IS NULL
  AND (k.expires_at IS NULL OR k.expires_at > now())
"""

END = "DELETE FROM ui_sessions WHERE token_hash = $1::bytea"


@dataclass(frozen=True, slots=True)
class UiSession:
    user: AuthUser
    csrf_token: str

    def csrf_matches(self, given: str | None) -> bool:
        """Whether a form's token is this session's (constant-time)."""
        return tokens_match(given, self.csrf_token)


def tokens_match(given: str | None, expected: str | None) -> bool:
    """Whether two form tokens are the same non-empty token, compared in constant time."""
    if not given or not expected:
        return False
    return hmac.compare_digest(given.encode(), expected.encode())


def _hash(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


async def start_session(pool: asyncpg.Pool | asyncpg.Connection, key_id: int, ttl_s: float) -> str:
    """A new session for a verified key; the token for the cookie (it is stored only hashed).
    Expired sessions of everyone are swept in the same statement (the table stays small)."""
    token = secrets.token_urlsafe(TOKEN_BYTES)
    await pool.execute(CREATE, _hash(token), key_id, secrets.token_urlsafe(TOKEN_BYTES), ttl_s)
    return token


async def find_session(pool: asyncpg.Pool | asyncpg.Connection, token: str) -> UiSession | None:
    """The live session of `token`, or None (unknown, expired, signed out, or its key stopped working)."""
    if not token or len(token) > 128:
        return None
    row = await pool.fetchrow(FIND, _hash(token))
    if row is None:
        return None
    user = AuthUser(
        id=row["user_id"], name=row["name"], key_id=row["key_id"], scopes=frozenset(row["scopes"])
    )
    return UiSession(user=user, csrf_token=row["csrf_token"])


async def end_session(pool: asyncpg.Pool | asyncpg.Connection, token: str) -> None:
    """Sign out: the token opens nothing from now on."""
    if token:
        await pool.execute(END, _hash(token))
