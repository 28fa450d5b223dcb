"""`GET /v1/namespaces`: the caller's namespaces with their live memory counts;
`POST /v1/namespaces/rename`: give one of them another name (app/namespaces/rename.py)."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Request, get, post
from litestar.datastructures import State
from litestar.params import JSONBody
from litestar.status_codes import HTTP_200_OK

from app.errors import problem
from app.namespaces.rename import rename_namespace
from app.namespaces.service import list_namespaces
from app.namespaces.share_routes import NAMESPACE


class NamespaceInfo(msgspec.Struct, kw_only=True):
    name: str
    memories: int


@get("/namespaces", tags=["namespaces"], summary="List your namespaces")
async def get_namespaces(request: Request[Any, Any, Any], state: State) -> list[NamespaceInfo]:
    rows = await list_namespaces(state.db.write, request.user.id)
    return [NamespaceInfo(name=r["name"], memories=r["memories"]) for r in rows]


class NamespaceRenameIn(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    namespace: Annotated[str, msgspec.Meta(**NAMESPACE, description="One of your namespaces")]
    new_name: Annotated[str, msgspec.Meta(**NAMESPACE, description="Its new name, not one of yours yet")]


class RenamedNamespace(msgspec.Struct, kw_only=True):
    """The namespace under its new name; renaming it back to `previous` undoes the rename."""

    namespace: str
    previous: str
    memories: int
    shares: int


@post(
    "/namespaces/rename",
    status_code=HTTP_200_OK,
    tags=["namespaces"],
    summary="Rename one of your namespaces (its memories, links, graph and shares go with it; never merges)",
    responses={
        404: problem("No namespace of yours by this name"),
        409: problem("The new name is one of your namespaces already (`namespace` names it)"),
        422: problem("An invalid or shared (@owner/...) name, or the same name twice"),
    },
)
async def rename_own_namespace(
    request: Request[Any, Any, Any], state: State, data: JSONBody[NamespaceRenameIn]
) -> RenamedNamespace:
    async with state.db.write.acquire() as conn:
        done = await rename_namespace(conn, request.user.id, data.namespace, data.new_name)
    return RenamedNamespace(
        namespace=done.namespace, previous=done.previous, memories=done.memories, shares=done.shares
    )
