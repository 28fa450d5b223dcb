"""Users and API keys: the SQL behind `memoria users|keys` and request authentication."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

import asyncpg

from app.auth.keys import display_prefix, generate_key, hash_key
from app.auth.scopes import ALL_SCOPES, DEFAULT_SCOPES


@dataclass(frozen=True, slots=True)
class AuthUser:
    id: int
    name: str
    key_id: int
    scopes: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class CreatedKey:
    id: int
    user: str
    key: str
    prefix: str
    scopes: tuple[str, ...] = DEFAULT_SCOPES
    expires_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class KeyInfo:
    id: int
    user: str
    prefix: str
    label: str | None
    created_at: datetime
    revoked_at: datetime | None
    scopes: tuple[str, ...] = ()
    expires_at: datetime | None = None
    last_used_at: datetime | None = None


class UserExists(ValueError):
    pass


class UnknownUser(LookupError):
    pass


class InvalidKeySpec(ValueError):
    """A key asked for with an unknown scope, no scope, or an expiry that is not in the future."""


def key_scopes(scopes: Iterable[str]) -> tuple[str, ...]:
    """`scopes` without repeats, in `ALL_SCOPES` order; InvalidKeySpec for none or an unknown one."""
    wanted = set(scopes)
    unknown = sorted(wanted - set(ALL_SCOPES))
    if unknown:
        raise InvalidKeySpec(f"unknown scope(s) {', '.join(unknown)}: choose among {', '.join(ALL_SCOPES)}")
    if not wanted:
        raise InvalidKeySpec("a key needs at least one scope")
    return tuple(scope for scope in ALL_SCOPES if scope in wanted)


async def authenticate(conn: asyncpg.Connection | asyncpg.Pool, key: str) -> AuthUser | None:
    row = await conn.fetchrow(
        """
        SELECT u.id, u.name, k.id AS key_id, k.scopes
        FROM api_keys k JOIN users u ON u.id = k.user_id
        WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
        """,
        hash_key(key),
    )
    return AuthUser(row["id"], row["name"], row["key_id"], frozenset(row["scopes"])) if row else None


async def create_user(conn: asyncpg.Connection, name: str) -> int:
    try:
        user_id: int = await conn.fetchval("INSERT INTO users (name) VALUES ($1) RETURNING id", name)
    except asyncpg.UniqueViolationError as exc:
        raise UserExists(f"user {name!r} already exists") from exc
    return user_id


async def get_or_create_user(conn: asyncpg.Connection, name: str) -> int:
    """The id of user `name`, created when missing (safe when two callers race)."""
    await conn.execute("INSERT INTO users (name) VALUES ($1) ON CONFLICT (name) DO NOTHING", name)
    user_id: int = await conn.fetchval("SELECT id FROM users WHERE name = $1", name)
    return user_id


async def list_users(conn: asyncpg.Connection) -> list[asyncpg.Record]:
    return list(await conn.fetch("SELECT id, name, created_at FROM users ORDER BY id"))


async def create_key(
    conn: asyncpg.Connection,
    user: str,
    label: str | None = None,
    scopes: Iterable[str] = DEFAULT_SCOPES,
    expires_at: datetime | None = None,
) -> CreatedKey:
    """A new key for `user` that may do what `scopes` allow, until `expires_at` (aware, in the
    future) if given. InvalidKeySpec for a bad scope or expiry, UnknownUser for a missing user."""
    granted = key_scopes(scopes)
    if expires_at is not None:
        if expires_at.tzinfo is None:
            raise InvalidKeySpec("an expiry needs a time zone (e.g. 2027-01-01T00:00:00Z)")
        if expires_at <= datetime.now(UTC):
            raise InvalidKeySpec(f"the expiry {expires_at.isoformat()} is not in the future")
    user_id = await conn.fetchval("SELECT id FROM users WHERE name = $1", user)
    if user_id is None:
        raise UnknownUser(f"no user named {user!r}")
    key = generate_key()
    key_id: int = await conn.fetchval(
        "INSERT INTO api_keys (user_id, prefix, key_hash, label, scopes, expires_at) "
        "VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
        user_id,
        display_prefix(key),
        hash_key(key),
        label,
        list(granted),
        expires_at,
    )
    return CreatedKey(
        id=key_id, user=user, key=key, prefix=display_prefix(key), scopes=granted, expires_at=expires_at
    )


async def revoke_key(conn: asyncpg.Connection, key_or_id: str) -> bool:
    """Revoke by numeric id or by the full key; True when a live key was revoked."""
    if key_or_id.isdigit():
        status = await conn.execute(
            "UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL", int(key_or_id)
        )
    else:
        status = await conn.execute(
            "UPDATE api_keys SET revoked_at = now() WHERE key_hash = $1 AND revoked_at IS NULL",
            hash_key(key_or_id),
        )
    return bool(status.endswith(" 1"))


async def list_keys(conn: asyncpg.Connection, user: str | None = None) -> list[KeyInfo]:
    rows = await conn.fetch(
        """
        SELECT k.id, u.name AS user, k.prefix, k.label, k.created_at, k.revoked_at,
               k.scopes, k.expires_at, k.last_used_at
        FROM api_keys k JOIN users u ON u.id = k.user_id
        WHERE $1::text IS NULL OR u.name = $1
        ORDER BY k.id
        """,
        user,
    )
    return [KeyInfo(**{**dict(r), "scopes": tuple(r["scopes"])}) for r in rows]
