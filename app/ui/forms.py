"""The web UI's forms read into the API's own types, so a memory written from a browser passes the
very validation and credential redaction an API store does (`MemoryService` applies both).

A form that does not read gives `FormError` with a message for a person; the page re-renders the
form with what they typed and that message (400), never a 500.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from typing import Any, TypeVar

import msgspec

from app.links.schemas import LINK_KINDS
from app.memories.schemas import MemoryIn, MemoryPatch
from app.ui.web import form_text

MAX_TAG_FIELD = 2000
MAX_ID = 2**63 - 1
T = TypeVar("T")


class FormError(ValueError):
    """A form value a person must fix; the message names the field."""


@dataclass(slots=True)
class MemoryForm:
    """What the add and edit forms show: the text as typed (re-shown on an error)."""

    namespace: str = "default"
    content: str = ""
    category: str = ""
    tags: str = ""
    importance: str = "0.5"
    errors: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, form: Mapping[str, Any]) -> MemoryForm:
        raw = form.get("content")
        return cls(
            namespace=form_text(form, "namespace") or "default",
            content=raw if isinstance(raw, str) else "",  # kept as typed: whitespace inside matters
            category=form_text(form, "category"),
            tags=form_text(form, "tags"),
            importance=form_text(form, "importance") or "0.5",
        )

    def tag_list(self) -> list[str]:
        if len(self.tags) > MAX_TAG_FIELD:
            raise FormError(f"Tags: at most {MAX_TAG_FIELD} characters")
        return [t.strip() for t in self.tags.split(",") if t.strip()]

    def importance_value(self) -> float:
        try:
            value = float(self.importance)
        except ValueError:
            raise FormError("Importance: a number between 0 and 1, such as 0.5") from None
        if not 0.0 <= value <= 1.0:
            raise FormError("Importance: a number between 0 and 1, such as 0.5")
        return value

    def _fields(self) -> dict[str, Any]:
        if not self.content.strip():
            raise FormError("Content: write what should be remembered")
        return {
            "content": self.content.strip(),
            "category": self.category or None,
            "tags": self.tag_list(),
            "importance": self.importance_value(),
        }

    def memory_in(self) -> MemoryIn:
        return _convert({"namespace": self.namespace, **self._fields()}, MemoryIn)

    def patch(self) -> MemoryPatch:
        return _convert(self._fields(), MemoryPatch)


@dataclass(slots=True)
class LinkForm:
    """The add-a-link form on a memory's page: a kind and the other memory's id, as typed."""

    kind: str = "supersedes"
    target: str = ""
    errors: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, form: Mapping[str, Any]) -> LinkForm:
        return cls(kind=form_text(form, "kind"), target=form_text(form, "target"))

    def kind_value(self) -> str:
        if self.kind not in LINK_KINDS:
            raise FormError(f"Kind: one of {', '.join(LINK_KINDS)}")
        return self.kind

    def target_id(self) -> int:
        """The other memory's id; `#12` reads as 12, the way the pages write ids."""
        return typed_memory_id(self.target, "Other memory")


def typed_memory_id(text: str, field_name: str) -> int:
    """A memory id typed into a form (`12` or `#12`); FormError for anything else."""
    digits = text.removeprefix("#").strip()
    if not digits.isascii() or not digits.isdigit() or not 1 <= int(digits) <= MAX_ID:
        raise FormError(f"{field_name}: a memory's id, such as 12")
    return int(digits)


def _convert(data: dict[str, Any], kind: type[T]) -> T:
    try:
        return msgspec.convert(data, kind)
    except msgspec.ValidationError as exc:
        raise FormError(_field_message(str(exc))) from None


def _field_message(message: str) -> str:
    """msgspec's `Expected ... - at $.category` as `Category: expected ...`."""
    text, _, where = message.partition(" - at `$.")
    name = where.rstrip("`").split("[")[0].split(".")[0]
    return f"{name.replace('_', ' ').capitalize()}: {text[0].lower() + text[1:]}" if name else text


def day_start(text: str, field_name: str) -> datetime | None:
    """A date field (`YYYY-MM-DD`) as the start of that day in UTC; None when empty."""
    if not text:
        return None
    try:
        return datetime.combine(date.fromisoformat(text), time.min, tzinfo=UTC)
    except ValueError:
        raise FormError(f"{field_name}: a date such as 2026-11-24") from None
