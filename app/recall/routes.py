"""`POST /v1/recall`: the memories that matter for a query."""

from __future__ import annotations

from typing import Any

from litestar import Request, post
from litestar.di import NamedDependency
from litestar.params import JSONBody
from litestar.status_codes import HTTP_200_OK

from app.auth import AuthUser
from app.auth.scopes import READ, SCOPE_OPT
from app.errors import problem
from app.recall.schemas import RecallRequest, RecallResponse
from app.recall.service import RecallService


@post(
    "/recall",
    status_code=HTTP_200_OK,
    tags=["recall"],
    summary="Hybrid recall (lexical + dense, RRF)",
    opt={SCOPE_OPT: READ},  # a POST that only reads: a read-only key may recall
    responses={404: problem("A `namespace` or `namespaces` entry you do not have")},
)
async def recall_memories(
    request: Request[AuthUser, int, Any],
    data: JSONBody[RecallRequest],
    recall: NamedDependency[RecallService],
) -> RecallResponse:
    return await recall.recall(request.user.id, data)
