"""A memory's links on its page: add one (a kind and the other memory's id) and undo one.

Both go through `LinkService`, the API's own: the same checks (the other memory must be the
caller's and of the same namespace, no cycle, a memory superseded once), in one transaction. A
refusal re-renders the memory's page with the message at the service's status (404, 409, 422) and
what was typed; a form that does not read (a kind or id that is not one) answers 400 the same way.
"""

from __future__ import annotations

from litestar import post
from litestar.di import NamedDependency
from litestar.response import Redirect, Template

from app.errors import ApiError
from app.links import LinkService
from app.ui.forms import FormError, LinkForm, typed_memory_id
from app.ui.pages.memories import Memories, MemoryId, memory_page
from app.ui.web import Session, UiRequest, form_text, see_other

Links = NamedDependency[LinkService]


@post("/memories/{memory_id:int}/links", include_in_schema=False)
async def add_link(
    request: UiRequest,
    session: Session,
    memories: Memories,
    links: Links,
    memory_id: MemoryId,
) -> Template | Redirect:
    """`this <kind> other`, as the form names them."""
    form = LinkForm.read(await request.form())
    try:
        await links.add(session.user.id, memory_id, form.kind_value(), form.target_id())
    except (FormError, ApiError) as exc:
        return await _page_again(request, session, memories, links, memory_id, form, exc)
    return see_other(f"/memories/{memory_id}", done="linked")


@post("/memories/{memory_id:int}/unlink", include_in_schema=False)
async def undo_link(
    request: UiRequest,
    session: Session,
    memories: Memories,
    links: Links,
    memory_id: MemoryId,
) -> Template | Redirect:
    """Undo one of the links the page lists: `direction` says which end this memory is (`out`:
    this <kind> other; `in`: other <kind> this), as the list shows it."""
    form = await request.form()
    kind, direction = form_text(form, "kind"), form_text(form, "direction")
    try:
        other = typed_memory_id(form_text(form, "other"), "Other memory")
        if direction not in {"out", "in"}:
            raise FormError("Direction: out or in")
        source, target = (memory_id, other) if direction == "out" else (other, memory_id)
        await links.remove(session.user.id, source, LinkForm(kind=kind).kind_value(), target)
    except (FormError, ApiError) as exc:
        return await _page_again(request, session, memories, links, memory_id, LinkForm(), exc)
    return see_other(f"/memories/{memory_id}", done="unlinked")


async def _page_again(
    request: UiRequest,
    session: Session,
    memories: Memories,
    links: Links,
    this: int,
    form: LinkForm,
    exc: FormError | ApiError,
) -> Template:
    """The memory's page with the refusal shown above its links, at the refusal's status."""
    form.errors = [exc.detail if isinstance(exc, ApiError) else str(exc)]
    status = exc.status_code if isinstance(exc, ApiError) else 400
    return await memory_page(request, session, memories, links, this, link_form=form, status_code=status)
