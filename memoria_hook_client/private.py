"""Remove `<private>…</private>` spans before a captured exchange leaves the function that read it.

A person keeps text out of memory by wrapping it in `<private>` tags in a prompt. The capture hook
removes the spans before anything is written to the local spool, so the text never reaches disk
outside Claude Code's own transcript, nor the network (the server removes them again, in case an
older client sent them). Tags match case-insensitively and across lines; an opening tag without a
closing one drops everything after it, since the person meant to hide something and we cannot tell
where it ends. Standard library only (`re`), for the hook's start-up.
"""

from __future__ import annotations

import re

_SPAN = re.compile(r"<private\b[^>]*>.*?(?:</private\s*>|\Z)", re.IGNORECASE | re.DOTALL)
_STRAY_CLOSE = re.compile(r"</private\s*>", re.IGNORECASE)


def strip_private(text: str) -> str:
    """`text` without its private spans (and without stray closing tags)."""
    if "<" not in text or "private" not in text.lower():
        return text
    return _STRAY_CLOSE.sub("", _SPAN.sub("", text))
