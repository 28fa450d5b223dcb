"""Bearer-key authentication for every `/v1` route (the hook route authenticates within its budget)."""

from __future__ import annotations

import asyncpg
from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException
from litestar.middleware import AbstractAuthenticationMiddleware, AuthenticationResult

from app.auth.service import AuthUser, authenticate


def bearer_key(authorization: str) -> str:
    """The key of an `Authorization: Bearer <key>` header value; 401 without one (no database asked)."""
    scheme, _, key = authorization.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise NotAuthorizedException("missing API key: send `Authorization: Bearer <key>`")
    return key.strip()


async def user_for_key(pool: asyncpg.Pool, key: str) -> AuthUser:
    """The user `key` acts for; 401 for an unknown or revoked key. The lookup acquires from `pool`,
    so it waits no longer than the request's deadline (`app.db.pool.BoundedPool`)."""
    user = await authenticate(pool, key)
    if user is None:
        raise NotAuthorizedException("invalid or revoked API key")
    return user


class ApiKeyMiddleware(AbstractAuthenticationMiddleware):
    async def authenticate_request(self, connection: ASGIConnection) -> AuthenticationResult:  # type: ignore[type-arg]
        key = bearer_key(connection.headers.get("authorization", ""))
        user = await user_for_key(connection.app.state.db.write, key)
        return AuthenticationResult(user=user, auth=user.key_id)
