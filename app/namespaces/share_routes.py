"""`/v1/shares`: share one of your namespaces with another user, see what you shared and what was
shared with you, revoke a share.

Changing shares needs more than reading them: which scope is the auth domain's business, so the
wiring (app/factory.py) hands the route `opt` of the changing routes to `share_routes`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any

import msgspec
from litestar import Request, Response, Router, delete, get, post
from litestar.datastructures import State
from litestar.openapi import ResponseSpec
from litestar.params import JSONBody, QueryParameter
from litestar.status_codes import HTTP_200_OK, HTTP_201_CREATED, HTTP_204_NO_CONTENT
from litestar.types import ControllerRouterHandler

from app.errors import problem
from app.namespaces.service import address_of
from app.namespaces.shares import Permission, grant, revoke, shares_granted, shares_received

NO_NUL = "^[^\x00]*$"  # PostgreSQL text cannot hold U+0000
NAMESPACE: dict[str, Any] = {"min_length": 1, "max_length": 200, "pattern": NO_NUL}
USER: dict[str, Any] = {"min_length": 1, "max_length": 128, "pattern": NO_NUL}
Namespace = Annotated[str, msgspec.Meta(**NAMESPACE, description="One of your namespaces, by its name")]
UserName = Annotated[str, msgspec.Meta(**USER, description="The user to share with")]
AuthRequest = Request[Any, Any, Any]


class ShareIn(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    namespace: Namespace
    user: UserName
    permission: Permission = "read"


class GrantedShare(msgspec.Struct, kw_only=True):
    """A share of one of your namespaces; `address` is what `user` calls it (`@you/namespace`)."""

    namespace: str
    user: str
    permission: Permission
    address: str
    created_at: datetime


class ReceivedShare(msgspec.Struct, kw_only=True):
    """A namespace shared with you; `namespace` is the `@owner/name` you call it by."""

    namespace: str
    owner: str
    permission: Permission
    created_at: datetime


class Shares(msgspec.Struct, kw_only=True):
    granted: list[GrantedShare]
    received: list[ReceivedShare]


NO_SUCH = problem("No namespace of yours by this name, or no user by this name")
BAD_SHARE = problem("A share with yourself, or a field that does not validate")


@get("/shares", tags=["shares"], summary="The shares you gave and the ones you received")
async def list_shares(request: AuthRequest, state: State) -> Shares:
    user = request.user
    granted = await shares_granted(state.db.write, user.id)
    received = await shares_received(state.db.write, user.id)
    return Shares(
        granted=[
            GrantedShare(
                namespace=r["namespace"],
                user=r["grantee"],
                permission=r["permission"],
                address=address_of(user.name, r["namespace"]),
                created_at=r["created_at"],
            )
            for r in granted
        ],
        received=[
            ReceivedShare(
                namespace=r["namespace"],
                owner=r["owner"],
                permission=r["permission"],
                created_at=r["created_at"],
            )
            for r in received
        ],
    )


@post(
    "/",
    status_code=HTTP_201_CREATED,
    tags=["shares"],
    summary="Share one of your namespaces with a user (read or write); again changes the permission",
    responses={
        HTTP_200_OK: ResponseSpec(
            GrantedShare,
            description="The share existed: its permission is now this one",
            generate_examples=False,
        ),
        404: NO_SUCH,
        422: BAD_SHARE,
    },
)
async def grant_share(request: AuthRequest, state: State, data: JSONBody[ShareIn]) -> Response[GrantedShare]:
    owner = request.user
    async with state.db.write.acquire() as conn:
        made = await grant(conn, owner.id, owner.name, data.namespace, data.user, data.permission)
    share = GrantedShare(
        namespace=made.namespace,
        user=made.user,
        permission=made.permission,
        address=address_of(owner.name, made.namespace),
        created_at=made.created_at,
    )
    return Response(share, status_code=HTTP_201_CREATED if made.created else HTTP_200_OK)


@delete(
    "/",
    status_code=HTTP_204_NO_CONTENT,
    tags=["shares"],
    summary="Revoke a share; the user's next request no longer reaches the namespace",
    responses={404: problem("No such share of a namespace of yours")},
)
async def revoke_share(
    request: AuthRequest,
    state: State,
    namespace: Annotated[str, QueryParameter(**NAMESPACE, description="One of your namespaces")],
    user: Annotated[str, QueryParameter(**USER, description="The user it is shared with")],
) -> None:
    await revoke(state.db.write, request.user.id, namespace, user)


def share_routes(change_opt: Mapping[str, Any]) -> list[ControllerRouterHandler]:
    """`GET /shares`, and `POST /shares` / `DELETE /shares` with `change_opt` as their route opt."""
    changing = Router(path="/shares", route_handlers=[grant_share, revoke_share], opt=dict(change_opt))
    return [list_shares, changing]
