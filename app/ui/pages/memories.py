"""The memories pages: a filtered, paginated list; add, read, edit, forget with undo, purge, promote,
and revealing a memory's redacted credentials (needs `secrets:read`; the service audits it).

Every change goes through `MemoryService`, the API's own: the same validation, redaction, locks and
follow-up jobs. Every POST answers 303 to a page (reload never re-posts) or, when the form does not
read, the form again with the message (4xx).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import urlencode

from litestar import Controller, get, post
from litestar.di import NamedDependency
from litestar.params import PathParameter
from litestar.response import Redirect, Template

from app.auth.scopes import SECRETS_READ
from app.auth.sessions import UiSession
from app.errors import ApiError, Forbidden, InvalidInput
from app.graph.browse import ConceptOut, concepts_of_memories, memory_concepts
from app.links import LinkService
from app.links.schemas import LINK_KINDS, LinkList
from app.memories import MemoryService
from app.memories.schemas import MemorySecrets
from app.memories.service import ListFilters
from app.namespaces import namespace_names
from app.ui.forms import FormError, LinkForm, MemoryForm, day_start
from app.ui.settings import UiSettings
from app.ui.web import Session, UiRequest, form_text, page, see_other

Memories = NamedDependency[MemoryService]
Links = NamedDependency[LinkService]
MemoryId = Annotated[int, PathParameter(ge=1, le=2**63 - 1)]
DONE = {
    "saved": "Saved.",
    "restored": "Restored.",
    "promoted": "Promoted: it is a curated memory now and never expires.",
    "linked": "Linked.",
    "unlinked": "Link undone.",
}
LINK_LABELS = {
    "supersedes out": "Supersedes",
    "supersedes in": "Superseded by",
    "resolved-by out": "Resolved by",
    "resolved-by in": "Resolves",
    "part-of out": "Part of",
    "part-of in": "Has as part",
    "see-also out": "See also",
    "see-also in": "See also",
}
"""A link as read from the page's memory: `<kind> <direction>` (`in`: the other memory is the source)."""


def _checked(request: UiRequest, name: str) -> bool:
    return request.query_params.get(name) in {"1", "on", "true"}


@dataclass(frozen=True, slots=True)
class ListChoice:
    """The list's filters as the form sent them (shown again in the form)."""

    namespace: str = ""
    category: str = ""
    source: str = ""
    tags: str = ""
    kind: str = ""
    since: str = ""
    until: str = ""
    sensitive: bool = False
    forgotten: bool = False
    superseded: bool = False
    """Show versions no longer current too (superseded, or past their validity), each marked."""

    @classmethod
    def read(cls, request: UiRequest) -> ListChoice:
        query = request.query_params
        return cls(
            namespace=query.get("namespace", ""),
            category=query.get("category", "").strip(),
            source=query.get("source", "").strip(),
            tags=query.get("tags", "").strip(),
            kind=query.get("kind", ""),
            since=query.get("since", ""),
            until=query.get("until", ""),
            sensitive=_checked(request, "sensitive"),
            forgotten=_checked(request, "forgotten"),
            superseded=_checked(request, "superseded"),
        )

    def filters(self) -> ListFilters:
        """The service's filters; FormError for a value that does not read."""
        if self.kind not in {"", "memory", "episode"}:
            raise FormError("Kind: memory or episode")
        return ListFilters(
            namespaces=[self.namespace] if self.namespace else None,
            category=self.category or None,
            source=self.source or None,
            tags=[t.strip() for t in self.tags.split(",") if t.strip()] or None,
            created_since=day_start(self.since, "From"),
            created_until=day_start(self.until, "To"),
            include_deleted=self.forgotten,
            include_sensitive=self.sensitive,
            kind="memory" if self.kind == "memory" else "episode" if self.kind == "episode" else None,
            include_superseded=self.superseded,
        )


class MemoryPages(Controller):
    path = "/memories"

    @get("/")
    async def list_page(
        self,
        request: UiRequest,
        session: Session,
        memories: Memories,
    ) -> Template:
        settings: UiSettings = request.app.state.ui_settings
        query = request.query_params
        chosen = ListChoice.read(request)
        namespaces = await namespace_names(request.app.state.db.read, session.user.id)
        error, items, next_cursor = "", [], None
        concepts: dict[int, list[ConceptOut]] = {}
        try:
            result = await memories.list(
                session.user.id, chosen.filters(), settings.page_size, query.get("cursor")
            )
            items, next_cursor = result.items, result.next_cursor
            concepts = await concepts_of_memories(
                request.app.state.db.read, session.user.id, [m.id for m in items]
            )
        except (FormError, ApiError) as exc:
            error = exc.detail if isinstance(exc, ApiError) else str(exc)
        forgotten = query.get("forgotten_id", "")
        return page(
            request,
            "memories.html",
            session,
            status_code=400 if error else 200,
            namespaces=namespaces,
            chosen=chosen,
            items=items,
            concepts=concepts,
            next_query=_with(request, cursor=next_cursor) if next_cursor else None,
            error=error,
            forgotten_id=int(forgotten) if forgotten.isdigit() else None,
            purged_id=query.get("purged_id", "") if query.get("purged_id", "").isdigit() else None,
        )

    @get("/new")
    async def new_page(self, request: UiRequest, session: Session) -> Template:
        namespace = request.query_params.get("namespace", "") or "default"
        return page(request, "memory_form.html", session, form=MemoryForm(namespace=namespace), memory=None)

    @post("/new")
    async def create(
        self,
        request: UiRequest,
        session: Session,
        memories: Memories,
    ) -> Template | Redirect:
        form = MemoryForm.read(await request.form())
        try:
            stored = await memories.store(session.user.id, [form.memory_in()])
        except (FormError, ApiError) as exc:
            return _form_again(request, session, form, exc, memory=None)
        return see_other(f"/memories/{stored[0].id}", done="saved")

    @get("/{memory_id:int}")
    async def read(
        self,
        request: UiRequest,
        session: Session,
        memories: Memories,
        links: Links,
        memory_id: MemoryId,
    ) -> Template:
        done = DONE.get(request.query_params.get("done", ""), "")
        return await memory_page(request, session, memories, links, memory_id, done=done)

    @get("/{memory_id:int}/edit")
    async def edit_page(
        self,
        request: UiRequest,
        session: Session,
        memories: Memories,
        memory_id: MemoryId,
    ) -> Template:
        memory = await memories.get(session.user.id, memory_id)
        form = MemoryForm(
            namespace=memory.namespace,
            content=memory.content,
            category=memory.category or "",
            tags=", ".join(memory.tags),
            importance=f"{memory.importance:g}",
        )
        return page(request, "memory_form.html", session, form=form, memory=memory)

    @post("/{memory_id:int}/edit")
    async def edit(
        self,
        request: UiRequest,
        session: Session,
        memories: Memories,
        memory_id: MemoryId,
    ) -> Template | Redirect:
        memory = await memories.get(session.user.id, memory_id)
        form = MemoryForm.read(await request.form())
        form.namespace = memory.namespace
        try:
            await memories.update(session.user.id, memory_id, form.patch())
        except (FormError, ApiError) as exc:
            return _form_again(request, session, form, exc, memory=memory)
        return see_other(f"/memories/{memory_id}", done="saved")

    @post("/{memory_id:int}/forget")
    async def forget(
        self,
        request: UiRequest,
        session: Session,
        memories: Memories,
        memory_id: MemoryId,
    ) -> Redirect:
        await memories.delete(session.user.id, memory_id)
        return see_other("/memories", forgotten_id=memory_id)

    @post("/{memory_id:int}/restore")
    async def restore(
        self,
        request: UiRequest,
        session: Session,
        memories: Memories,
        memory_id: MemoryId,
    ) -> Redirect:
        await memories.restore(session.user.id, memory_id)
        return see_other(f"/memories/{memory_id}", done="restored")

    @get("/{memory_id:int}/purge")
    async def purge_page(
        self,
        request: UiRequest,
        session: Session,
        memories: Memories,
        memory_id: MemoryId,
    ) -> Template:
        memory = await memories.get(session.user.id, memory_id, include_deleted=True)
        return page(request, "purge.html", session, memory=memory)

    @post("/{memory_id:int}/purge")
    async def purge(
        self,
        request: UiRequest,
        session: Session,
        memories: Memories,
        memory_id: MemoryId,
    ) -> Redirect:
        if form_text(await request.form(), "confirm") != "purge":
            raise InvalidInput("purging needs the confirmation page's button")
        await memories.delete(session.user.id, memory_id, purge=True)
        return see_other("/memories", purged_id=memory_id)

    @post("/{memory_id:int}/promote")
    async def promote(
        self,
        request: UiRequest,
        session: Session,
        memories: Memories,
        memory_id: MemoryId,
    ) -> Redirect:
        await memories.promote(session.user.id, memory_id)
        return see_other(f"/memories/{memory_id}", done="promoted")

    @post("/{memory_id:int}/secrets")
    async def reveal(
        self,
        request: UiRequest,
        session: Session,
        memories: Memories,
        links: Links,
        memory_id: MemoryId,
    ) -> Template:
        """The originals of the memory's placeholders, on this answer only (never cached: the page
        headers say no-store). The service writes the audit row in the same transaction."""
        if SECRETS_READ not in session.user.scopes:
            raise Forbidden(f"revealing secrets needs a key with the `{SECRETS_READ}` scope")
        client = request.client.host if request.client is not None else None
        secrets = await memories.read_secrets(session.user.id, memory_id, session.user.key_id, client)
        return await memory_page(request, session, memories, links, memory_id, secrets=secrets)


async def memory_page(
    request: UiRequest,
    session: UiSession,
    memories: MemoryService,
    links: LinkService,
    memory_id: int,
    *,
    done: str = "",
    secrets: MemorySecrets | None = None,
    link_form: LinkForm | None = None,
    status_code: int = 200,
) -> Template:
    """A memory with its concepts and its links both ways (a forgotten one too: its page offers
    the undo); `link_form` re-shows the add-a-link form as typed, with what to fix."""
    memory = await memories.get(session.user.id, memory_id, include_deleted=True)
    concepts = await memory_concepts(request.app.state.db.read, session.user.id, memory_id)
    linked: LinkList = await links.of(session.user.id, memory_id)
    return page(
        request,
        "memory.html",
        session,
        status_code=status_code,
        memory=memory,
        concepts=concepts,
        links=linked.links,
        link_form=link_form or LinkForm(),
        link_kinds=LINK_KINDS,
        link_labels=LINK_LABELS,
        done=done,
        may_reveal=SECRETS_READ in session.user.scopes,
        secrets=secrets,
    )


def _form_again(
    request: UiRequest,
    session: Session,
    form: MemoryForm,
    exc: FormError | ApiError,
    memory: Any,
) -> Template:
    """The form as the person filled it, with what to fix."""
    status = exc.status_code if isinstance(exc, ApiError) else 400
    form.errors = [exc.detail if isinstance(exc, ApiError) else str(exc)]
    return page(request, "memory_form.html", session, status_code=status, form=form, memory=memory)


def _with(request: UiRequest, **changes: Any) -> str:
    """This page's query with some parameters changed (the pagination links keep the filters)."""
    params = {k: v for k, v in request.query_params.dict().items() if k not in changes}
    items = [(k, v) for k, values in params.items() for v in values]
    items += [(k, str(v)) for k, v in changes.items() if v is not None]
    return urlencode(items)
