"""Tool results as compact text sized for a model's context.

Every character a tool answers lands in the agent's context, so a memory is one header line
(`#id [category] score …`) and its text with whitespace collapsed; long texts are cut at a
per-memory cap, the whole answer at a total cap, and every cut says what was left out and how to get
it (`memory_get`), so the agent never mistakes a shortened memory for the whole of it. Credentials
never reach these texts: the write path stored placeholders in their place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from app.links.schemas import Link, LinkList
from app.memories.schemas import Memory, StoreResult
from app.recall.legs import LEGS
from app.recall.schemas import EffectiveSettings, RecallHit


def clip(text: str, limit: int, memory_id: int | None = None) -> str:
    """`text` with whitespace collapsed, cut to `limit` characters with the cut marked."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    hint = f"; memory_get {memory_id} for all" if memory_id is not None else ""
    marker = f" …[truncated, {len(flat) - limit} more chars{hint}]"
    return flat[:limit] + marker


def _tags(tags: Sequence[str]) -> str:
    return f" tags:{','.join(tags)}" if tags else ""


def _header(memory_id: int, category: str | None, namespace: str, extra: str, tags: Sequence[str]) -> str:
    kind = f" [{category}]" if category else ""
    return f"#{memory_id}{kind}{extra} ns:{namespace}{_tags(tags)}"


def join_capped(header: str, blocks: Sequence[str], max_chars: int) -> str:
    """`header` and as many whole `blocks` as fit in `max_chars`; the rest counted, not shown."""
    text = header
    for shown, block in enumerate(blocks):
        addition = "\n" + block
        if len(text) + len(addition) > max_chars:
            left = len(blocks) - shown
            return text + f"\n…[{left} more not shown: narrow the query or lower limit]"
        text += addition
    return text


LINKED_CHARS = 100
"""How much of the memory at the other end of a link `memory_get` and `memory_link` quote."""


def _versions(hit: RecallHit) -> str:
    """What a hit says about versions and fixes: ` replaces #a,#b` (it stands in their place),
    ` superseded by #x` (only there when replaced versions were asked for), ` resolves #p` (a fix
    that came along with its problem), ` valid until …` (a version no longer current)."""
    marks = ""
    if hit.replaces:
        marks += " replaces " + ",".join(f"#{old}" for old in hit.replaces)
    if hit.superseded_by is not None:
        marks += f" superseded by #{hit.superseded_by}"
    if hit.valid_to is not None:
        marks += f" valid until {hit.valid_to:%Y-%m-%d}"
    if hit.came_with is not None:
        marks += f" resolves #{hit.came_with}"
    return marks


def recall_text(
    hits: Sequence[RecallHit],
    degraded: bool,
    memory_chars: int,
    max_chars: int,
    settings: EffectiveSettings | None = None,
) -> str:
    """The hits, best first; with `settings` (an explained recall) a line that says how the legs
    were weighed (the query's shape and each leg's weight) after the header."""
    if not hits:
        return "No memories matched." + (" (search degraded: lexical only)" if degraded else "")
    blocks = []
    for hit in hits:
        episode = " episode" if hit.kind == "episode" else ""  # curated memories are the unmarked default
        extra = f"{episode} score {hit.score:.3f} {hit.created_at:%Y-%m-%d}{_versions(hit)}"
        lines = [
            _header(hit.id, hit.category, hit.namespace, extra, hit.tags),
            clip(hit.content, memory_chars, hit.id),
        ]
        if hit.explain is not None:
            e = hit.explain
            legs = [
                f"{leg.name} #{rank}" for leg in LEGS if (rank := getattr(e, leg.rank_column)) is not None
            ]
            lines.append(
                f"  why: {', '.join(legs) or 'no leg'}"
                + (f" via {e.graph_path}" if e.graph_path else "")
                + f"; fused {e.fused_score:.4f}, final {e.final_score:.4f}"
                + (
                    f"; re-ranker {e.rerank_score:.3f} (fused #{e.fused_position})"
                    if e.rerank_score is not None
                    else ""
                )
            )
        blocks.append("\n".join(lines))
    header = (
        f"{len(hits)} memories, best first" + (" (search degraded: lexical only)" if degraded else "") + ":"
    )
    if settings is not None:
        header += f"\n  fusion: {settings.fusion_line()}"
        if settings.rerank_model:
            header += f"\n  re-ranked by {settings.rerank_model}"
    return join_capped(header, blocks, max_chars)


def _state(memory: Memory) -> str:
    """` episode (expires …)` and/or ` pinned`; nothing for a plain curated memory."""
    state = (
        f" episode (expires {memory.expires_at:%Y-%m-%d})"
        if memory.kind == "episode" and memory.expires_at
        else ""
    )
    state = state or (" episode" if memory.kind == "episode" else "")
    return state + (" pinned" if memory.pinned else "")


def list_text(memories: Sequence[Memory], order: str, memory_chars: int, max_chars: int) -> str:
    if not memories:
        return "No memories yet."
    blocks = [
        _header(
            m.id,
            m.category,
            m.namespace,
            f"{_state(m)} importance {m.importance:g} {m.created_at:%Y-%m-%d}",
            m.tags,
        )
        + "\n"
        + clip(m.content, memory_chars, m.id)
        for m in memories
    ]
    which = "newest first" if order == "recent" else "most important first"
    return join_capped(f"{len(memories)} memories, {which}:", blocks, max_chars)


def _validity(memory: Memory) -> list[str]:
    lines = []
    if memory.valid_from is not None or memory.valid_to is not None:
        since = f" from {memory.valid_from:%Y-%m-%d %H:%M}" if memory.valid_from is not None else ""
        until = f" until {memory.valid_to:%Y-%m-%d %H:%M}" if memory.valid_to is not None else ""
        lines.append(f"valid{since}{until}")
    if memory.superseded_by is not None:
        lines.append(f"superseded by #{memory.superseded_by} (recall shows that one instead)")
    return lines


def _link_line(link: Link) -> str:
    other = link.memory
    said = f"this {link.kind} #{other.id}" if link.direction == "out" else f"#{other.id} {link.kind} this"
    auto = f" (auto: {link.reason})" if link.origin == "auto" and link.reason else ""
    return f"  {said}{auto}: {clip(other.content, LINKED_CHARS, other.id)}"


def memory_text(memory: Memory, max_chars: int, links: LinkList | None = None) -> str:
    extra = f"{_state(memory)} importance {memory.importance:g} created {memory.created_at:%Y-%m-%d}"
    lines = [_header(memory.id, memory.category, memory.namespace, extra, memory.tags)]
    if memory.expanded_keywords:
        lines.append(f"keywords: {memory.expanded_keywords}")
    if memory.has_secrets:
        lines.append("(credentials in it are shown as [secret:…] placeholders)")
    lines += _validity(memory)
    if links is not None and links.links:
        lines.append("links:")
        lines += [_link_line(link) for link in links.links]
    head = "\n".join(lines) + "\n"
    return head + clip(memory.content, max(max_chars - len(head), 100))


def links_text(links: LinkList, max_chars: int) -> str:
    """A memory's links (what `memory_link` answers), one a line."""
    if not links.links:
        return f"#{links.memory_id} has no links."
    header = f"#{links.memory_id} links:"
    if links.superseded_by is not None:
        header += f" (superseded by #{links.superseded_by})"
    return join_capped(header, [_link_line(link) for link in links.links], max_chars)


class SupersedeSuggestion(Protocol):
    """An older memory a stored one looks like it replaces, not linked (the supersede rule was not
    confident): offered to the agent, which links it with `memory_link` when it agrees (the shape
    of `app.memories.schemas.SupersedeSuggestion`)."""

    @property
    def id(self) -> int: ...

    @property
    def content(self) -> str: ...

    @property
    def reason(self) -> str: ...


def suggestions_text(stored_id: int, suggestions: Sequence[SupersedeSuggestion]) -> list[str]:
    """The store answer's "this looks like it replaces #…" lines for one stored memory (none: no lines)."""
    return [
        f"#{stored_id} looks like it replaces #{s.id} (\u201c{s.content}\u201d): {s.reason}. "
        f"If it does: memory_link id={stored_id} kind=supersedes target={s.id}"
        for s in suggestions
    ]


def stored_text(results: Sequence[StoreResult]) -> str:
    """The stored ids, what each now supersedes, and the older memories each looks like it
    replaces (the supersede rule's suggestions), one line each, for the agent to confirm."""
    parts = [
        f"#{r.id} ns:{r.namespace}"
        + (" (already stored)" if r.duplicate else "")
        + (f" (supersedes {', '.join(f'#{old}' for old in r.superseded)})" if r.superseded else "")
        for r in results
    ]
    offered = [line for r in results for line in suggestions_text(r.id, r.supersede_suggestions)]
    return "\n".join([f"Stored {len(results)}: " + ", ".join(parts), *offered])
