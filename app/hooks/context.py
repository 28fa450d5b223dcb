"""The `additionalContext` text: recalled memories, best first, in as few characters as possible.

Every character lands in the model's context on every prompt, so each memory is one line
(`#id [category] content`, whitespace collapsed) and the whole block stops at a character budget.
A memory that does not fit is skipped rather than cut, so a later, shorter one can still make it;
only the best memory is ever shortened, so a prompt with hits never gets nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.recall.schemas import RecallHit


def header(namespace: str) -> str:
    return (
        f"Memories recalled by Memoria from namespace {namespace}, best first "
        "(saved in earlier sessions; they may be out of date):"
    )


def memory_line(hit: RecallHit) -> str:
    category = f" [{hit.category}]" if hit.category else ""
    return f"- #{hit.id}{category} {' '.join(hit.content.split())}"


def render(namespace: str, hits: Sequence[RecallHit], max_chars: int) -> tuple[str, int]:
    """(text, memories included); ("", 0) when nothing fits."""
    text = header(namespace)
    included = 0
    for hit in hits:
        line = "\n" + memory_line(hit)
        room = max_chars - len(text)
        if len(line) <= room:
            text += line
            included += 1
        elif included == 0 and room > 40:
            text += line[: room - 1] + "…"
            included += 1
    return (text, included) if included else ("", 0)
