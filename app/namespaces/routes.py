"""`GET /v1/namespaces`: the caller's namespaces with their live memory counts. (Renaming and merging
them: app/memories/merge_routes.py, which may refuse a credential in a new name.)"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, get
from litestar.datastructures import State

from app.namespaces.service import list_namespaces


class NamespaceInfo(msgspec.Struct, kw_only=True):
    name: str
    memories: int


@get("/namespaces", tags=["namespaces"], summary="List your namespaces")
async def get_namespaces(request: Request[Any, Any, Any], state: State) -> list[NamespaceInfo]:
    rows = await list_namespaces(state.db.write, request.user.id)
    return [NamespaceInfo(name=r["name"], memories=r["memories"]) for r in rows]
