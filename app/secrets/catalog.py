"""The maintained rule catalog: Kingfisher's bundled rules, run in process, as one more source of spans.

Provider formats change and multiply faster than a hand-kept list can follow (Docker Hub's
`dckr_pat_`, Linear's `lin_api_`, `age` keys, Azure storage account keys, DigitalOcean's `dop_v1_`,
Telegram bot tokens, …), so the long tail comes from a maintained catalog instead:
`kingfisher-secret-scanner` (MongoDB's Kingfisher; it bundles the Betterleaks rule set, the successor
of gitleaks' rules, and Google's Veles detectors), pinned to an exact version in pyproject.toml so a
rule release changes what is redacted only through a reviewed bump. It compiles its rules to one
vectorscan database and scans a memory in one native pass, never touching the network (validation
and revocation, its other features, are not used).

What a catalog rule found still passes `catalog_value` (app/secrets/accept.py), so documentation
values (`AKIAIOSFODNN7EXAMPLE`, `xxxx…`) stay text; a few of its rules are left out (`SKIPPED`)
because they mark a whole structure rather than the credential inside it, which Memoria's own rules
redact more narrowly.

Building the catalog compiles a few hundred patterns (seconds, cached on disk by the library
afterwards), so it is built once, on first use or when the server starts (`warm`), never at import.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from kingfisher_sdk import Scanner

SKIPPED = frozenset(
    {
        # the whole service-account JSON object: the private key and its id have rules of their own
        "betterleaks.gcp-service-account",
        # names, not secrets: the account a storage key belongs to
        "betterleaks.azure-storage-account-name",
    }
)
"""Catalog rules whose findings are not used (their ids as the catalog names them)."""

GENERIC = frozenset(
    {"betterleaks.curl-auth-header", "betterleaks.curl-auth-user", "betterleaks.generic-credential-uri"}
)
"""Catalog rules that know a credential by its context, as Memoria's keyword rules do: they run last,
so a value both find keeps Memoria's kind (`bearer-token`, `url-password`, `password`)."""

_PREFIXES = ("betterleaks.", "kingfisher.", "veles.secrets/", "veles.", "custom.")
_NOT_KIND = re.compile(r"[^a-z0-9-]+")


class CatalogSpan(NamedTuple):
    """One catalog finding in a text: placeholder kind, character offsets, and the rule's id."""

    kind: str
    start: int
    end: int
    rule_id: str

    @property
    def generic(self) -> bool:
        return self.rule_id in GENERIC


def kind_of(rule_id: str) -> str:
    """A placeholder kind for a catalog rule: `betterleaks.linear-api-key` → `linear-api-key`."""
    name = rule_id
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            name = name[len(prefix) :]
            break
    kind = _NOT_KIND.sub("-", name.lower()).strip("-")[:40].strip("-")
    return kind or "credential"


_lock = threading.Lock()
_scanner: Scanner | None = None


def scanner() -> Scanner:
    """The catalog's scanner, built on first use (thread-safe; the library's scans are too)."""
    global _scanner
    if _scanner is None:
        with _lock:
            if _scanner is None:
                from kingfisher_sdk import Rules, Scanner

                _scanner = Scanner(Rules(builtins=True), base64=True, dedup=False, redact=False)
    return _scanner


def warm() -> None:
    """Build the catalog now (the server calls this at start-up, off the event loop), so no store
    pays for compiling it."""
    scanner()


def _char_offsets(text: str, data: bytes) -> list[int] | None:
    """For each UTF-8 byte offset of `text`, its character offset; None when they are the same."""
    if len(data) == len(text):
        return None
    offsets: list[int] = []
    for index, char in enumerate(text):
        offsets.extend([index] * len(char.encode("utf-8")))
    offsets.append(len(text))
    return offsets


_TOKEN_CHAR = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-")
_MAX_WIDEN = 1024


def _whole_token(text: str, start: int, end: int) -> tuple[int, int]:
    """The span widened to the whole run of token characters it sits in (and its `=` padding): a
    catalog pattern of fixed length must not leave the rest of a longer token behind."""
    if start > 0 and text[start - 1] in _TOKEN_CHAR and text[start] in _TOKEN_CHAR:
        limit = max(0, start - _MAX_WIDEN)
        while start > limit and text[start - 1] in _TOKEN_CHAR:
            start -= 1
    if end < len(text) and text[end - 1] in _TOKEN_CHAR:
        limit = min(len(text), end + _MAX_WIDEN)
        while end < limit and text[end] in _TOKEN_CHAR:
            end += 1
        padding = 0
        while end < len(text) and text[end] == "=" and padding < 2:
            end, padding = end + 1, padding + 1
    return start, end


def catalog_spans(text: str) -> Iterator[CatalogSpan]:
    """What the catalog's rules find in `text`, as character spans of the secret each matched."""
    data = text.encode("utf-8", "surrogatepass")
    findings = scanner().scan(data)
    if not findings:
        return
    offsets = _char_offsets(text, data)
    for finding in findings:
        if not finding.visible or finding.rule_id in SKIPPED:
            continue
        location = finding.location
        start, end = int(location["start_offset"]), int(location["end_offset"])
        if offsets is not None:
            start, end = offsets[min(start, len(data))], offsets[min(end, len(data))]
        if 0 <= start < end <= len(text):
            start, end = _whole_token(text, start, end)
            yield CatalogSpan(kind_of(finding.rule_id), start, end, finding.rule_id)
