"""Replace the credentials in a memory by typed, numbered placeholders: `[secret:github-token#1]`.

Numbers count per memory, across kinds, in order of first appearance, and the same credential twice
gets the same number: the placeholder stays a useful reference ("use [secret:aws-secret-key#2] in
CI") and the vault seals each distinct original once, under its number (`Secret.number` is the
`ordinal` of its `memory_secrets` row). Text that already holds placeholders (a memory copied from a
redacted one, an edit of a redacted memory) keeps them: new numbers start after the highest one
present, so a stored original never changes the placeholder it answers to.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from app.secrets.detect import PLACEHOLDER, Detector


def placeholder(kind: str, number: int) -> str:
    return f"[secret:{kind}#{number}]"


def placeholders_in(text: str) -> set[int]:
    """The numbers of the placeholders `text` holds: after an edit, the sealed originals whose
    number is no longer among them belong to nothing and can be deleted."""
    if "[secret:" not in text:
        return set()
    return {int(match.group(2)) for match in PLACEHOLDER.finditer(text)}


class Finding(NamedTuple):
    """One credential found in the original text: `original == text[start:end]`, shown in the
    redacted text as `placeholder(kind, number)`."""

    kind: str
    original: str
    start: int
    end: int
    number: int

    @property
    def placeholder(self) -> str:
        return placeholder(self.kind, self.number)


@dataclass(frozen=True, slots=True)
class Secret:
    """One distinct credential of a memory, as the vault seals it: `number` is its ordinal."""

    number: int
    kind: str
    original: str


@dataclass(frozen=True, slots=True)
class Redacted:
    """`text` with every credential replaced; `findings` in the order they occur in the original."""

    text: str
    findings: tuple[Finding, ...]

    @property
    def secrets(self) -> tuple[Secret, ...]:
        """Each distinct credential once, by number: what `Vault.seal` takes."""
        seen: dict[int, Secret] = {}
        for finding in self.findings:
            seen.setdefault(finding.number, Secret(finding.number, finding.kind, finding.original))
        return tuple(sorted(seen.values(), key=lambda secret: secret.number))


class _Numbering:
    """Numbers of one memory: the same original keeps its number; new ones follow the highest seen."""

    def __init__(self, texts: Sequence[str], used: Iterable[int] = ()) -> None:
        present = (n for text in texts for n in placeholders_in(text))
        self._next = max((*used, *present), default=0) + 1
        self._of: dict[str, int] = {}

    def number(self, original: str) -> int:
        if original not in self._of:
            self._of[original] = self._next
            self._next += 1
        return self._of[original]


def _apply(detector: Detector, text: str, numbering: _Numbering) -> Redacted:
    spans = detector.scan(text)
    if not spans:
        return Redacted(text, ())
    parts: list[str] = []
    findings: list[Finding] = []
    cursor = 0
    for kind, start, end in spans:
        original = text[start:end]
        finding = Finding(kind, original, start, end, numbering.number(original))
        findings.append(finding)
        parts += (text[cursor:start], finding.placeholder)
        cursor = end
    parts.append(text[cursor:])
    return Redacted("".join(parts), tuple(findings))


DEFAULT_DETECTOR = Detector()
"""Every rule; immutable once built, so one instance serves every caller."""


def redact(text: str, detector: Detector = DEFAULT_DETECTOR) -> Redacted:
    """`text` with its credentials replaced by numbered placeholders, and what was replaced."""
    return _apply(detector, text, _Numbering((text,)))


def redact_all(
    texts: Sequence[str], detector: Detector = DEFAULT_DETECTOR, *, used: Iterable[int] = ()
) -> list[Redacted]:
    """The texts of one memory (content, expanded keywords, …) redacted with one numbering, so a
    credential in two fields is one placeholder number and one sealed original. `used`: numbers
    the memory already holds outside `texts` (an edit's untouched or replaced fields): new
    credentials are numbered after them, so a number never changes what it stands for."""
    numbering = _Numbering(texts, used)
    return [_apply(detector, text, numbering) for text in texts]


def secrets_of(redacted: Sequence[Redacted]) -> tuple[Secret, ...]:
    """The distinct credentials of several texts redacted together (`redact_all`), by number."""
    merged = {secret.number: secret for item in redacted for secret in item.secrets}
    return tuple(merged[number] for number in sorted(merged))
