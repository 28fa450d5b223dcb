"""API keys with chosen scopes and expiry, made directly in a test database."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import asyncpg

from app.auth.service import CreatedKey, create_key, get_or_create_user


async def scoped_key(
    conn: asyncpg.Connection, user: str, scopes: Iterable[str], expires_at: datetime | None = None
) -> CreatedKey:
    await get_or_create_user(conn, user)
    return await create_key(conn, user, scopes=tuple(scopes), expires_at=expires_at)


def bearer(created: CreatedKey | str) -> dict[str, str]:
    key = created if isinstance(created, str) else created.key
    return {"Authorization": f"Bearer {key}"}
