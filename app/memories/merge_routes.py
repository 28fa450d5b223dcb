"""`POST /v1/namespaces/merge`: merge one of your namespaces into another (app/memories/merge.py);
without `"apply": true` it only answers what the merge would move."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Request, post
from litestar.di import NamedDependency
from litestar.params import JSONBody
from litestar.status_codes import HTTP_200_OK

from app.errors import problem
from app.memories.merge import merge_namespaces
from app.memories.service import MemoryService
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
