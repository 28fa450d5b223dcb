"""Bearer-key authentication for every `/v1` route."""

from __future__ import annotations

from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException
from litestar.middleware import AbstractAuthenticationMiddleware, AuthenticationResult

from app.auth.service import authenticate


class ApiKeyMiddleware(AbstractAuthenticationMiddleware):
    async def authenticate_request(self, connection: ASGIConnection) -> AuthenticationResult:  # type: ignore[type-arg]
        header = connection.headers.get("authorization", "")
        scheme, _, key = header.partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            raise NotAuthorizedException("missing API key: send `Authorization: Bearer <key>`")
        user = await authenticate(connection.app.state.db.write, key.strip())
        if user is None:
            raise NotAuthorizedException("invalid or revoked API key")
        return AuthenticationResult(user=user, auth=user.key_id)
