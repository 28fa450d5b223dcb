"""Bearer-key authentication, rate limits and scopes for every `/v1` route (the hook route does the
same within its budget, and answers `{}` where this answers 403 or 429)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException
from litestar.middleware import AbstractAuthenticationMiddleware, AuthenticationResult

from app.auth.gate import Gate
from app.auth.scopes import ANY_KEY, READ, SCOPE_OPT, WRITE
from app.auth.service import AuthUser
from app.core import timing
from app.db.replica import act_for
from app.errors import Forbidden

if TYPE_CHECKING:
    from litestar.types import HTTPScope

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def bearer_key(authorization: str) -> str:
    """The key of an `Authorization: Bearer <key>` header value; 401 without one (no database asked)."""
    scheme, _, key = authorization.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise NotAuthorizedException("missing API key: send `Authorization: Bearer <key>`")
    return key.strip()


def client_host(connection: ASGIConnection[Any, Any, Any, Any]) -> str | None:
    """The client address the failed-authentication limit counts against (a trusted proxy's
    `X-Forwarded-For` names it)."""
    gate: Gate = connection.app.state.gate
    peer = connection.client.host if connection.client else None
    return gate.client(peer, connection.headers.getall("x-forwarded-for", []))


def required_scope(opt: Mapping[str, Any], method: str) -> str:
    """The scope a route needs: the one its `opt` names, else `read` to read and `write` to change."""
    named = opt.get(SCOPE_OPT)
    if isinstance(named, str):
        return named
    return READ if method.upper() in READ_METHODS else WRITE


def missing_scope(user: AuthUser, scope: str) -> str | None:
    """`scope` when `user`'s key lacks it, else None (`ANY_KEY` routes take every valid key)."""
    return None if scope == ANY_KEY or scope in user.scopes else scope


def forbidden(scope: str) -> Forbidden:
    return Forbidden(
        f"this API key lacks the `{scope}` scope this route needs "
        f"(create one with `memoria keys create --scope {scope}`)",
        required_scope=scope,
    )


class ApiKeyMiddleware(AbstractAuthenticationMiddleware):
    async def authenticate_request(self, connection: ASGIConnection) -> AuthenticationResult:  # type: ignore[type-arg]
        key = bearer_key(connection.headers.get("authorization", ""))
        gate: Gate = connection.app.state.gate
        pool = connection.app.state.db.write
        with timing.timed("auth"):
            await gate.sweep_if_due(pool)
            user = await gate.admit(pool, key, client_host(connection))
        method = cast("HTTPScope", connection.scope)["method"]  # the API has no websocket routes
        scope = missing_scope(user, required_scope(connection.route_handler.opt, method))
        if scope is not None:
            raise forbidden(scope)
        act_for(user.id, note_writes=True)  # read-your-writes on a replica (app.db.replica)
        return AuthenticationResult(user=user, auth=user.key_id)
