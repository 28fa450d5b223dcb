"""Input checks shared by every write and read path: what msgspec's schemas cannot express."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from app.errors import InvalidInput


def no_nul(value: Any, where: str) -> None:
    """PostgreSQL text and jsonb cannot hold U+0000; reject it instead of failing in the database."""
    if isinstance(value, str):
        if "\x00" in value:
            raise InvalidInput(f"{where} contains a NUL character")
    elif isinstance(value, dict):
        for key, item in value.items():
            no_nul(key, f"{where} key")
            no_nul(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            no_nul(item, f"{where}[{index}]")


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> None:
    """An object's members, refused when a name repeats; nothing is kept (only the check is wanted)."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen.add(key)


def duplicate_key(document: bytes | str) -> str | None:
    """The first name that appears twice in one object of a JSON document (already decoded once, so
    known to be valid), or None. Decoders keep the last of them silently, so `{"name": "memory_list",
    "name": "memory_store"}` meant whatever the decoder chose: every JSON body the service reads (the
    REST API's, `/mcp`'s) is refused instead. RecursionError for a document nested too deeply."""
    try:
        json.loads(document, object_pairs_hook=_unique_keys)
    except _DuplicateKey as found:
        return found.key
    return None


@dataclass(frozen=True, slots=True)
class TagLimits:
    """How many tags a memory (or a tag filter) may hold, and how long one may be."""

    max_tags: int
    max_tag_chars: int


def clean_tags(tags: list[str], limits: TagLimits, where: str = "tags") -> list[str]:
    """Stripped, de-duplicated tags within the limits (stored tags and tag filters follow one rule)."""
    max_tags, max_tag_chars = limits.max_tags, limits.max_tag_chars
    if len(tags) > max_tags:
        raise InvalidInput(f"{where} has {len(tags)} entries; the limit is {max_tags}")
    cleaned: list[str] = []
    for index, tag in enumerate(tags):
        no_nul(tag, f"{where}[{index}]")
        value = tag.strip()
        if not value:
            raise InvalidInput(f"{where}[{index}] must not be empty")
        if len(value) > max_tag_chars:
            raise InvalidInput(f"{where}[{index}] is longer than {max_tag_chars} characters")
        if value not in cleaned:
            cleaned.append(value)
    return cleaned
