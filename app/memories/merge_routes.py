"""`POST /v1/namespaces/merge`: merge one of your namespaces into another (app/memories/merge.py);
without `"apply": true` it only answers what the merge would move. `POST /v1/namespaces/rename`:
give one of them another name (app/namespaces/rename.py); here, beside the merge, because a new name
goes through the same credential check as every name a write stores (app/memories/redaction.py)."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Request, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import JSONBody
from litestar.status_codes import HTTP_200_OK

from app.errors import problem
from app.memories.merge import merge_namespaces
from app.memories.redaction import refuse_credential_in_name
from app.memories.service import MemoryService
from app.namespaces.rename import rename_namespace
from app.namespaces.share_routes import NAMESPACE


class NamespaceMergeIn(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    namespace: Annotated[str, msgspec.Meta(**NAMESPACE, description="The namespace to merge away")]
    into: Annotated[str, msgspec.Meta(**NAMESPACE, description="The namespace that receives its memories")]
    apply: bool = False
    """False: answer what the merge would do, change nothing."""


class MergedNamespace(msgspec.Struct, kw_only=True):
    """`memories` moved from `merged` into `namespace` (forgotten ones included); `duplicates` of
    them were live copies of memories `namespace` held, moved as forgotten; `applied` false: a plan."""

    namespace: str
    merged: str
    memories: int
    duplicates: int
    shares: int
    applied: bool


@post(
    "/namespaces/merge",
    status_code=HTTP_200_OK,
    tags=["namespaces"],
    summary="Merge one of your namespaces into another (a plan unless apply is true; not undone by a rename)",
    responses={
        404: problem("No namespace of yours by one of these names"),
        422: problem("An invalid or shared (@owner/...) name, or the same name twice"),
    },
)
async def merge_namespace(
    request: Request[Any, Any, Any],
    memories: NamedDependency[MemoryService],
    data: JSONBody[NamespaceMergeIn],
) -> MergedNamespace:
    done = await merge_namespaces(
        memories.writes, request.user.id, data.namespace, data.into, apply=data.apply
    )
    return MergedNamespace(
        namespace=done.namespace,
        merged=done.merged,
        memories=done.memories,
        duplicates=done.duplicates,
        shares=done.shares,
        applied=done.applied,
    )


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
        422: problem(
            "An invalid or shared (@owner/...) name, the same name twice, or a new name holding what "
            "looks like a credential"
        ),
    },
)
async def rename_own_namespace(
    request: Request[Any, Any, Any], state: State, data: JSONBody[NamespaceRenameIn]
) -> RenamedNamespace:
    refuse_credential_in_name(data.new_name, "new_name")  # a name is stored and shown as given
    async with state.db.write.acquire() as conn:
        done = await rename_namespace(conn, request.user.id, data.namespace, data.new_name)
    return RenamedNamespace(
        namespace=done.namespace, previous=done.previous, memories=done.memories, shares=done.shares
    )
