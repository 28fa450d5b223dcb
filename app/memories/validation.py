"""Checks that depend on settings (limits) or that msgspec cannot express (NUL bytes, blank text)."""

from __future__ import annotations

from typing import Any

import msgspec

from app.errors import InvalidInput
from app.memories.schemas import MemoryIn, MemoryPatch
from app.namespaces import validate_namespace_name
from app.settings import MemorySettings


def _no_nul(value: Any, where: str) -> None:
    """PostgreSQL text and jsonb cannot hold U+0000; reject it instead of failing in the database."""
    if isinstance(value, str):
        if "\x00" in value:
            raise InvalidInput(f"{where} contains a NUL character")
    elif isinstance(value, dict):
        for key, item in value.items():
            _no_nul(key, f"{where} key")
            _no_nul(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _no_nul(item, f"{where}[{index}]")


def clean_content(content: str, limits: MemorySettings, where: str = "content") -> str:
    _no_nul(content, where)
    text = content.strip()
    if not text:
        raise InvalidInput(f"{where} must not be empty")
    if len(text) > limits.max_content_chars:
        raise InvalidInput(f"{where} is {len(text)} characters; the limit is {limits.max_content_chars}")
    return text


def clean_tags(tags: list[str], limits: MemorySettings, where: str = "tags") -> list[str]:
    if len(tags) > limits.max_tags:
        raise InvalidInput(f"{where} has {len(tags)} entries; the limit is {limits.max_tags}")
    cleaned: list[str] = []
    for index, tag in enumerate(tags):
        _no_nul(tag, f"{where}[{index}]")
        value = tag.strip()
        if not value:
            raise InvalidInput(f"{where}[{index}] must not be empty")
        if len(value) > limits.max_tag_chars:
            raise InvalidInput(f"{where}[{index}] is longer than {limits.max_tag_chars} characters")
        if value not in cleaned:
            cleaned.append(value)
    return cleaned


def _clean_optional(value: str | None, where: str, max_chars: int) -> str | None:
    if value is None:
        return None
    _no_nul(value, where)
    text = value.strip()
    if len(text) > max_chars:
        raise InvalidInput(f"{where} is longer than {max_chars} characters")
    return text or None


def clean_memory(item: MemoryIn, limits: MemorySettings, where: str = "") -> MemoryIn:
    validate_namespace_name(item.namespace)
    _no_nul(item.metadata, f"{where}metadata")
    return msgspec.structs.replace(
        item,
        content=clean_content(item.content, limits, f"{where}content"),
        category=_clean_optional(item.category, f"{where}category", 64),
        tags=clean_tags(item.tags, limits, f"{where}tags"),
        expanded_keywords=_clean_optional(
            item.expanded_keywords, f"{where}expanded_keywords", limits.max_keywords_chars
        ),
        source=_clean_optional(item.source, f"{where}source", 500),
    )


def clean_patch(patch: MemoryPatch, limits: MemorySettings) -> MemoryPatch:
    changes: dict[str, Any] = {}
    if isinstance(patch.content, str):
        changes["content"] = clean_content(patch.content, limits)
    if isinstance(patch.tags, list):
        changes["tags"] = clean_tags(patch.tags, limits)
    if patch.category is None or isinstance(patch.category, str):
        changes["category"] = _clean_optional(patch.category, "category", 64)
    if patch.expanded_keywords is None or isinstance(patch.expanded_keywords, str):
        changes["expanded_keywords"] = _clean_optional(
            patch.expanded_keywords, "expanded_keywords", limits.max_keywords_chars
        )
    if patch.source is None or isinstance(patch.source, str):
        changes["source"] = _clean_optional(patch.source, "source", 500)
    if isinstance(patch.metadata, dict):
        _no_nul(patch.metadata, "metadata")
    return msgspec.structs.replace(patch, **changes)
