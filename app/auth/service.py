"""Users and API keys: the SQL behind `memoria users|keys` and request authentication."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg

from app.auth.keys import display_prefix, generate_key, hash_key


@dataclass(frozen=True, slots=True)
class AuthUser:
    id: int
    name: str
    key_id: int


@dataclass(frozen=True, slots=True)
class CreatedKey:
    id: int
    user: str
    key: str
    prefix: str


@dataclass(frozen=True, slots=True)
class KeyInfo:
    id: int
    user: str
    prefix: str
    label: str | None
    created_at: datetime
    revoked_at: datetime | None


class UserExists(ValueError):
    pass


class UnknownUser(LookupError):
    pass


async def authenticate(conn: asyncpg.Connection | asyncpg.Pool, key: str) -> AuthUser | None:
    row = await conn.fetchrow(
        """
        SELECT u.id, u.name, k.id AS key_id
        FROM api_keys k JOIN users u ON u.id = k.user_id
        WHERE k.key_hash = $1 AND k.revoked_at IS NULL
        """,
        hash_key(key),
    )
    return AuthUser(row["id"], row["name"], row["key_id"]) if row else None


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


async def create_key(conn: asyncpg.Connection, user: str, label: str | None = None) -> CreatedKey:
    user_id = await conn.fetchval("SELECT id FROM users WHERE name = $1", user)
    if user_id is None:
        raise UnknownUser(f"no user named {user!r}")
    key = generate_key()
    key_id: int = await conn.fetchval(
        "INSERT INTO api_keys (user_id, prefix, key_hash, label) VALUES ($1, $2, $3, $4) RETURNING id",
        user_id,
        display_prefix(key),
        hash_key(key),
        label,
    )
    return CreatedKey(id=key_id, user=user, key=key, prefix=display_prefix(key))


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
        SELECT k.id, u.name AS user, k.prefix, k.label, k.created_at, k.revoked_at
        FROM api_keys k JOIN users u ON u.id = k.user_id
        WHERE $1::text IS NULL OR u.name = $1
        ORDER BY k.id
        """,
        user,
    )
    return [KeyInfo(**dict(r)) for r in rows]
