"""Every free-text field of a memory redacted with one numbering, before anything else sees it.

The write paths (store, batch, PATCH, and so `memoria import`) redact here and store only the result:
the content hash, the embedding (local or hosted), the concept graph (its jobs read stored text),
recall, explain, the hook and exports all see placeholders, never a credential, because nothing
else is ever stored. The fields are content, category, tags, expanded keywords, source and every
string value inside metadata, at any depth (keys are names and stay as they are). One numbering
across them all: the same credential in the content and in a tag is one placeholder number and one
sealed original.

Length: limits are checked on the text as the client sent it (what the client can see and count). A
placeholder can be longer than the credential it replaces (`hunter2!x` → `[secret:password#1]`), so
the stored text may exceed the configured limit by that much; only the database's own bounds stop it
(content 100,000 characters, category 64), with a 422 that says the placeholders are why, never
a constraint violation (500).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from app.errors import InvalidInput
from app.secrets import Secret, placeholders_in, redact, redact_all, secrets_of
from app.secrets.detect import PLACEHOLDER
from app.secrets.redact import Finding

TEXT_FIELDS = ("content", "category", "tags", "expanded_keywords", "source", "metadata")
"""The fields of a memory that hold free text, in the order their strings are numbered."""

STORED_BOUNDS = {"content": 100_000, "category": 64}
"""The `memories` CHECK constraints on text length: a redacted value past one is a 422."""


def _strings(value: Any) -> Iterator[str]:
    """The strings of a field value, depth first: a string, a list of tags, metadata's values."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _replaced(value: Any, texts: Iterator[str]) -> Any:
    """`value` with its strings taken, in `_strings` order, from `texts`."""
    if isinstance(value, str):
        return next(texts)
    if isinstance(value, dict):
        return {key: _replaced(item, texts) for key, item in value.items()}
    if isinstance(value, list):
        return [_replaced(item, texts) for item in value]
    return value


def texts_of(fields: Mapping[str, Any]) -> list[str]:
    """Every string the fields hold, in numbering order."""
    return [text for name in TEXT_FIELDS if name in fields for text in _strings(fields[name])]


def placeholder_numbers(fields: Mapping[str, Any]) -> set[int]:
    """The placeholder numbers the fields hold: the sealed originals a memory keeps."""
    return {number for text in texts_of(fields) for number in placeholders_in(text)}


def placeholders_by_number(fields: Mapping[str, Any]) -> dict[int, str]:
    """Each placeholder number the fields hold, with the placeholder as first written there."""
    found: dict[int, str] = {}
    for text in texts_of(fields):
        if "[secret:" in text:
            for match in PLACEHOLDER.finditer(text):
                found.setdefault(int(match.group(2)), match.group(0))
    return found


@dataclass(frozen=True, slots=True)
class RedactedFields:
    fields: dict[str, Any]
    """The same fields, credentials replaced by placeholders."""
    secrets: tuple[Secret, ...]
    """Each distinct credential once, by number: what the vault seals."""


def redact_fields(fields: Mapping[str, Any], *, used: Iterable[int] = ()) -> RedactedFields:
    """`fields` (any of `TEXT_FIELDS`) redacted with one numbering that starts after `used` and
    after the placeholders the fields already hold."""
    present = {name: fields[name] for name in TEXT_FIELDS if name in fields}
    texts = texts_of(present)
    redacted = redact_all(texts, used=used)
    if not any(item.findings for item in redacted):
        return RedactedFields(dict(present), ())
    replacements = iter([item.text for item in redacted])
    out = {name: _replaced(value, replacements) for name, value in present.items()}
    return RedactedFields(out, secrets_of(redacted))


def check_stored_bounds(fields: Mapping[str, Any], where: str = "") -> None:
    """A 422 (not the database's 500) when placeholders pushed a value past its column's bound."""
    for name, bound in STORED_BOUNDS.items():
        value = fields.get(name)
        if isinstance(value, str) and len(value) > bound:
            raise InvalidInput(
                f"{where}{name} is {len(value)} characters once its credentials are replaced by "
                f"placeholders; at most {bound} can be stored"
            )


def credentials_in(text: str) -> list[Finding]:
    """What credential detection finds in `text` (empty: none)."""
    return list(redact(text).findings)


def refuse_credential_in_name(name: str, where: str) -> None:
    """A name the service stores and shows as given (a namespace, a capture's session id) is never
    rewritten, as free text is: a placeholder in it would make it another name, one the caller does
    not know. One that holds a credential is refused (422, naming the kind, never the credential)."""
    findings = credentials_in(name)
    if findings:
        kinds = ", ".join(sorted({finding.kind for finding in findings}))
        raise InvalidInput(
            f"{where} holds what looks like a credential ({kinds}); names are stored and shown as given, "
            "so choose one without it"
        )
