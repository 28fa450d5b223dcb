"""Checks that depend on settings (limits) or that msgspec cannot express (NUL bytes, blank text)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from app.core.validation import clean_tags, no_nul
from app.errors import InvalidInput
from app.memories.schemas import MemoryIn, MemoryPatch, in_utc
from app.memories.settings import MemorySettings
from app.namespaces import validate_namespace_name

SOURCE_MAX_CHARS = 500
"""A memory's `source`: a short name of where it came from, never a document."""


def clean_content(content: str, limits: MemorySettings, where: str = "content") -> str:
    no_nul(content, where)
    text = content.strip()
    if not text:
        raise InvalidInput(f"{where} must not be empty")
    if len(text) > limits.max_content_chars:
        raise InvalidInput(f"{where} is {len(text)} characters; the limit is {limits.max_content_chars}")
    return text


def _clean_optional(value: str | None, where: str, max_chars: int) -> str | None:
    if value is None:
        return None
    no_nul(value, where)
    text = value.strip()
    if len(text) > max_chars:
        raise InvalidInput(f"{where} is longer than {max_chars} characters")
    return text or None


def _depth(value: Any, limit: int) -> int:
    """How deeply `value` nests (an object or array is one level), counting no further than `limit + 1`.

    Iterative: a recursive walk of a document ~990 levels deep is what raised RecursionError (500).
    """
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            break
        stack.extend((child, depth + 1) for child in children)
    return deepest


def check_metadata(metadata: dict[str, Any], limits: MemorySettings, where: str = "metadata") -> None:
    """Metadata within the nesting and size limits, and storable (no NUL); checked in that order, so
    the size and NUL checks never walk a document deeper than the limit."""
    depth = _depth(metadata, limits.max_metadata_depth)
    if depth > limits.max_metadata_depth:
        raise InvalidInput(f"{where} nests deeper than {limits.max_metadata_depth} levels")
    size = len(msgspec.json.encode(metadata))
    if size > limits.max_metadata_bytes:
        raise InvalidInput(f"{where} is {size} bytes as JSON; the limit is {limits.max_metadata_bytes}")
    no_nul(metadata, where)


def check_validity(valid_from: datetime | None, valid_to: datetime | None, where: str = "") -> None:
    """A validity that ends before it starts holds at no time: refused, never stored."""
    if valid_from is not None and valid_to is not None and valid_to < valid_from:
        raise InvalidInput(
            f"{where}valid_to ({valid_to.isoformat()}) is before {where}valid_from ({valid_from.isoformat()})"
        )


def _utc(value: datetime | None, where: str) -> datetime | None:
    try:
        return in_utc(value) if value is not None else None
    except ValueError as exc:
        raise InvalidInput(f"{where}: {exc}") from None


def clean_memory(item: MemoryIn, limits: MemorySettings, where: str = "") -> MemoryIn:
    validate_namespace_name(item.namespace)
    check_metadata(item.metadata, limits, f"{where}metadata")
    valid_from, valid_to = (
        _utc(item.valid_from, f"{where}valid_from"),
        _utc(item.valid_to, f"{where}valid_to"),
    )
    check_validity(valid_from, valid_to, where)
    return msgspec.structs.replace(
        item,
        valid_from=valid_from,
        valid_to=valid_to,
        supersedes=list(dict.fromkeys(item.supersedes)),
        content=clean_content(item.content, limits, f"{where}content"),
        category=_clean_optional(item.category, f"{where}category", 64),
        tags=clean_tags(item.tags, limits.tag_limits, f"{where}tags"),
        expanded_keywords=_clean_optional(
            item.expanded_keywords, f"{where}expanded_keywords", limits.max_keywords_chars
        ),
        source=_clean_optional(item.source, f"{where}source", SOURCE_MAX_CHARS),
    )


def clean_patch(patch: MemoryPatch, limits: MemorySettings) -> MemoryPatch:
    changes: dict[str, Any] = {}
    if isinstance(patch.content, str):
        changes["content"] = clean_content(patch.content, limits)
    if isinstance(patch.tags, list):
        changes["tags"] = clean_tags(patch.tags, limits.tag_limits)
    if patch.category is None or isinstance(patch.category, str):
        changes["category"] = _clean_optional(patch.category, "category", 64)
    if patch.expanded_keywords is None or isinstance(patch.expanded_keywords, str):
        changes["expanded_keywords"] = _clean_optional(
            patch.expanded_keywords, "expanded_keywords", limits.max_keywords_chars
        )
    if patch.source is None or isinstance(patch.source, str):
        changes["source"] = _clean_optional(patch.source, "source", SOURCE_MAX_CHARS)
    if isinstance(patch.metadata, dict):
        check_metadata(patch.metadata, limits)
    for name in ("valid_from", "valid_to"):
        value = getattr(patch, name)
        if isinstance(value, datetime):
            changes[name] = _utc(value, name)
    return msgspec.structs.replace(patch, **changes)
