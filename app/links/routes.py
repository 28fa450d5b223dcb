"""HTTP routes of the links API: thin handlers over `LinkService`, under a memory's path."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, delete, get, post
from litestar.di import NamedDependency
from litestar.params import FromQuery, JSONBody, PathParameter
from litestar.status_codes import HTTP_201_CREATED, HTTP_204_NO_CONTENT

from app.auth import AuthUser
from app.core.deadline import DEADLINE_KIND, WRITE
from app.errors import problem
from app.links.schemas import ExportedLink, LinkIn, LinkKind, LinkList
from app.links.service import LinkService

AuthRequest = Request[AuthUser, int, Any]
MemoryId = Annotated[int, PathParameter(ge=1, le=2**63 - 1, description="Memory id")]
Service = NamedDependency[LinkService]
NOT_YOURS = problem("No memory with this id among yours (or it is deleted)")


class LinkController(Controller):
    path = "/memories/{memory_id:int}/links"
    tags = ["links"]

    @get(
        "/",
        summary="A memory's links, both ways",
        description=(
            "Every link of the memory to another memory the caller may see: `out` links read "
            '"this memory <kind> the other", `in` links "the other <kind> this memory". '
            "`superseded_by` names the memory recall shows instead of this one."
        ),
        responses={404: NOT_YOURS},
    )
    async def list_links(self, request: AuthRequest, memory_id: MemoryId, links: Service) -> LinkList:
        return await links.of(request.user.id, memory_id)

    @post(
        "/",
        status_code=HTTP_201_CREATED,
        summary="Link this memory to another one of its namespace",
        description=(
            "`supersedes`: this memory replaces `target`, which then leaves recall, hooks and "
            "session start (unless asked for with `include_superseded`) and stops holding "
            "(`valid_to`); `resolved-by`: `target` fixes the problem this memory states, and comes "
            "along when it is recalled; `part-of`, `see-also`: shown beside it. Making a link that "
            "exists changes nothing. Returns the memory's links."
        ),
        opt={DEADLINE_KIND: WRITE},
        responses={
            403: problem(
                "This memory or `target` is shared with you read-only, or the key lacks the `write` scope"
            ),
            404: NOT_YOURS,
            409: problem("The link would close a cycle, or `target` is superseded by another memory already"),
            422: problem("A link to itself, or to a memory of another namespace"),
        },
    )
    async def add_link(
        self, request: AuthRequest, memory_id: MemoryId, data: JSONBody[LinkIn], links: Service
    ) -> LinkList:
        return await links.add(request.user.id, memory_id, data.kind, data.target)

    @delete(
        "/{kind:str}/{target:int}",
        status_code=HTTP_204_NO_CONTENT,
        summary="Undo a link",
        description="A memory this one superseded holds again as it did before the link.",
        opt={DEADLINE_KIND: WRITE},
        responses={
            403: problem("This memory is shared with you read-only, or the key lacks the `write` scope"),
            404: problem("No such link among your memories"),
        },
    )
    async def remove_link(
        self,
        request: AuthRequest,
        memory_id: MemoryId,
        kind: Annotated[LinkKind, PathParameter(description="The link's kind")],
        target: Annotated[int, PathParameter(ge=1, le=2**63 - 1)],
        links: Service,
    ) -> None:
        await links.remove(request.user.id, memory_id, kind, target)


@get(
    "/links",
    tags=["links"],
    summary="The links among your memories of some namespaces (export)",
    description=(
        "Every link both of whose memories `GET /v1/memories` lists for the same namespaces (live; "
        "sensitive ones only with `include_sensitive`), by memory id, oldest first: what "
        "`memoria export` writes beside the memories, for `memoria import` to make again. Without "
        "`namespace`, all of your own namespaces; a namespace shared with you when named "
        "(`@owner/name`)."
    ),
    responses={404: problem("No namespace by that name among yours or those shared with you")},
)
async def list_namespace_links(
    request: AuthRequest,
    links: Service,
    namespace: FromQuery[list[str] | None] = None,
    include_sensitive: FromQuery[bool] = False,
) -> list[ExportedLink]:
    return await links.among(request.user.id, namespace or None, include_sensitive)
