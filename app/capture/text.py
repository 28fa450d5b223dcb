"""An exchange as the text of its episodes: private spans removed, a deterministic tool digest,
chunked under a size cap. Pure functions: the same exchange always gives the same chunks, which is
what makes `<session>:<turn>:<chunk>` a stable idempotency key."""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.capture.schemas import Digest

_SPAN = re.compile(r"<private\b[^>]*>.*?(?:</private\s*>|\Z)", re.IGNORECASE | re.DOTALL)
_STRAY_CLOSE = re.compile(r"</private\s*>", re.IGNORECASE)

BREAKS = ("\n\n", "\n", " ")
"""Where a chunk may end, best first: a paragraph, a line, a word."""


def strip_private(text: str) -> str:
    """`text` without its `<private>…</private>` spans (tags in any case, across lines) and without
    stray closing tags. An opening tag that is never closed drops everything after it: the person
    meant to hide something, and nothing says where it ends. The client removed them already; the
    server does it again for older or other clients."""
    if "<" not in text or "private" not in text.lower():
        return text
    return _STRAY_CLOSE.sub("", _SPAN.sub("", text))


def clean_said(text: str) -> str:
    """What a person or the assistant said, as stored: private spans out, NUL characters out
    (PostgreSQL text cannot hold them; a transcript may), blank edges trimmed."""
    return strip_private(text.replace("\x00", "")).strip()


def _listed(label: str, items: Sequence[str]) -> str | None:
    kept = [item.replace("\x00", "").strip() for item in items]
    kept = [item for item in kept if item]
    return f"{label} {', '.join(kept)}" if kept else None


def digest_line(digest: Digest) -> str | None:
    """`Tools: files touched a, b; files read c; commands x; errors y; subagents z`: the parts that
    have items, in that order; None when the exchange used no tools."""
    parts = [
        _listed("files touched", digest.files_touched),
        _listed("files read", digest.files_read),
        _listed("commands", digest.commands),
        _listed("errors", digest.errors),
        _listed("subagents", digest.subagents),
    ]
    present = [part for part in parts if part is not None]
    return "Tools: " + "; ".join(present) if present else None


def episode_text(prompt: str, reply: str, digest: Digest) -> str:
    """`User: …\\n\\nAssistant: …\\n\\nTools: …` from already cleaned prompt and reply (a part that is
    empty is left out)."""
    parts = []
    if prompt:
        parts.append(f"User: {prompt}")
    if reply:
        parts.append(f"Assistant: {reply}")
    tools = digest_line(digest)
    if tools is not None:
        parts.append(tools)
    return "\n\n".join(parts)


def chunk(text: str, max_chars: int) -> list[str]:
    """`text` in pieces of at most `max_chars` characters, each cut at the last paragraph break in
    its window, else the last line break, else the last space (when that keeps at least half the
    window), else hard at `max_chars`. Pieces are trimmed and never empty; deterministic."""
    if max_chars < 1:
        raise ValueError("max_chars must be at least 1")
    pieces: list[str] = []
    rest = text.strip()
    while len(rest) > max_chars:
        window = rest[: max_chars + 1]  # a break right after the window still ends a full piece
        cut = max_chars
        for mark in BREAKS:
            at = window.rfind(mark)
            if at >= max_chars // 2:
                cut = at
                break
        piece = rest[:cut].rstrip()
        if piece:
            pieces.append(piece)
        rest = rest[cut:].lstrip()
    if rest:
        pieces.append(rest)
    return pieces
