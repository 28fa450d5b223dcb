"""Find credentials in memory text: provider tokens, key blocks, URL passwords, keyword assignments.

Detection is detect-secrets' (its plugins' regular expressions, its JWT validity check, its entropy
and its look-alike heuristics), a maintained catalog of provider rules (Kingfisher's, pinned:
app/secrets/catalog.py) and patterns for what neither covers: the rules are in app/secrets/rules.py
and app/secrets/context_rules.py, the judgement of what a rule matched in app/secrets/accept.py, and
this module runs them over a text. Only detect-secrets' pure parts are used: its `analyze_line` consults the
library's global settings and may try to verify a token over the network, neither of which belongs
in a store path.

Speed: a rule runs only where (or, for a few, only when) one of its trigger substrings occurs, found
with `str.find` on a lowercase copy, so a memory without credentials costs a few dozen substring
searches; every repetition is bounded and an occurrence inside the previous match is not tried
again, so adversarial text (`eyJeyJeyJ…`, `ghp_ghp_…`) stays linear. The catalog is one native
pass of a compiled multi-pattern database over the whole text. `memoria bench secrets`
measures the cost per memory.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from app.secrets.accept import Entropy, catalog_value
from app.secrets.catalog import CatalogSpan, catalog_spans
from app.secrets.rule import VALUE, Rule
from app.secrets.rules import KINDS, RULES

__all__ = ["KINDS", "PLACEHOLDER", "RULES", "Detector", "Span"]

PLACEHOLDER = re.compile(r"\[secret:([a-z0-9-]{1,40})#([1-9][0-9]{0,8})\]")
"""A placeholder as redaction writes it (`[secret:github-token#1]`); group 1 the kind, 2 the number."""


class Span(NamedTuple):
    """One credential in a text: its kind (`github-token`) and where it is (`text[start:end]`)."""

    kind: str
    start: int
    end: int


_VALUE_GROUPS = ("dq", "sq", "bq", "bare")
_TRAILING = ".,;:)]}"


def _value_span(match: re.Match[str]) -> tuple[int, int]:
    """Where the value of a keyword assignment is: inside its quotes, or bare without the sentence's
    closing punctuation (`password=Zx9k2mQ4, then …`)."""
    groups = match.re.groupindex
    for name in _VALUE_GROUPS:
        if name in groups and match.group(name) is not None:
            start, end = match.span(name)
            if name == "bare":
                text = match.string
                while end > start and text[end - 1] in _TRAILING:
                    end -= 1
            return start, end
    raise AssertionError("an assignment pattern always captures a value")


_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def _present(seen: dict[str, bool], low: str, trigger: str) -> bool:
    """Whether `trigger` is in `low`, looked up once per scan (rules share triggers)."""
    if trigger not in seen:
        seen[trigger] = trigger in low
    return seen[trigger]


def _occurrences(low: str, triggers: Sequence[str]) -> list[int]:
    """Where any of `triggers` starts in `low`, in order."""
    found: set[int] = set()
    for trigger in triggers:
        at = low.find(trigger)
        while at >= 0:
            found.add(at)
            at = low.find(trigger, at + 1)
    return sorted(found)


def _extent(rule: Rule, match: re.Match[str]) -> tuple[int, int]:
    """Where the secret of `match` is, its tail included; `start == end` when there is none."""
    text = match.string
    if rule.group == VALUE:
        start, end = _value_span(match)
    else:
        start, end = match.span(rule.group)
    if start < 0:
        return 0, 0
    if rule.tail is not None:
        tail = rule.tail.match(text, end)
        if tail is not None:
            end = tail.end()
        if rule.kind == "jwt":
            while end > start and text[end - 1] == ".":
                end -= 1
    return start, end


def _candidates(rule: Rule, text: str, low: str, present: dict[str, bool]) -> Iterator[tuple[int, int]]:
    """Where the rule's pattern finds a secret, before its value is judged.

    An anchored rule is tried only where its triggers occur, and not again inside what its previous
    match covered (`ghp_ghp_ghp_…`) nor, for a token that must start a word, after a letter or digit
    (`eyJeyJeyJ…`): without that, a run of repeated triggers costs time quadratic in its length.
    """
    if not rule.anchored:
        if any(_present(present, low, trigger) for trigger in rule.triggers):
            for match in rule.pattern.finditer(text):
                yield _extent(rule, match)
        return
    resume = 0
    check_start = rule.bounded or rule.word_start
    for at in _occurrences(low, rule.triggers):
        if at < resume or (check_start and at > 0 and text[at - 1].isalnum()):
            continue
        anchored = rule.pattern.match(text, at)
        if anchored is not None:
            start, end = _extent(rule, anchored)
            resume = max(anchored.end(), end)
            yield start, end


def _add_catalog_span(taken: list[Span], span: Span, *, widen: bool) -> None:
    """A catalog finding joins what the rules took: alone, or (`widen`) widening the spans of the
    rules' it overlaps (their kind kept), so a token a rule found only part of is redacted whole;
    never touching a placeholder already in the text."""
    overlapping = [t for t in taken if span.start < t.end and t.start < span.end]
    if not overlapping:
        taken.append(span)
        return
    if not widen or any(not t.kind for t in overlapping):
        return
    for t in overlapping:
        taken.remove(t)
    start = min(span.start, *(t.start for t in overlapping))
    end = max(span.end, *(t.end for t in overlapping))
    taken.append(Span(overlapping[0].kind, start, end))


class Detector:
    """Finds credentials with `rules` (default: all of `RULES`) and, with `catalog`, the maintained
    catalog's rules (app/secrets/catalog.py) between the rules marked `after_catalog` and the others;
    holds nothing but them, so one detector may serve every request."""

    def __init__(self, rules: Sequence[Rule] = RULES, *, catalog: bool = True) -> None:
        self._rules = tuple(rules)
        self._catalog = catalog
        self._entropy = Entropy()

    @property
    def kinds(self) -> tuple[str, ...]:
        """The kinds of its own rules (the catalog's are named after its rules, `kind_of`)."""
        return tuple(dict.fromkeys(rule.kind for rule in self._rules))

    def scan(self, text: str) -> list[Span]:
        """Every credential in `text`, in order, never overlapping (the earlier rule wins)."""
        low = text.lower()
        if len(low) != len(text):  # a few non-ASCII letters lower to two characters; keep offsets
            low = text.translate(_ASCII_LOWER)
        present: dict[str, bool] = {}
        # placeholders already in the text (an edit of a redacted memory) are nobody's value
        kept = [Span("", m.start(), m.end()) for m in PLACEHOLDER.finditer(text)] if "[secret:" in low else []
        taken: list[Span] = list(kept)
        self._run([rule for rule in self._rules if not rule.after_catalog], text, low, present, taken)
        catalog = list(catalog_spans(text)) if self._catalog else []
        self._add_catalog([span for span in catalog if not span.generic], text, taken)
        self._run([rule for rule in self._rules if rule.after_catalog], text, low, present, taken)
        self._add_catalog([span for span in catalog if span.generic], text, taken)
        found = [span for span in taken if span.kind]
        found.sort(key=lambda span: span.start)
        return found

    def _add_catalog(self, spans: Sequence[CatalogSpan], text: str, taken: list[Span]) -> None:
        for span in spans:
            if catalog_value(self._entropy, text[span.start : span.end]):
                # a context rule of the catalog's (`curl -u`) only fills gaps: its match is wider
                # than the secret (the user name too), where a format's match is the token itself
                _add_catalog_span(taken, Span(span.kind, span.start, span.end), widen=not span.generic)

    def _run(
        self, rules: Sequence[Rule], text: str, low: str, present: dict[str, bool], taken: list[Span]
    ) -> None:
        """Add to `taken` what `rules` find where nothing is taken yet, the earlier rule first."""
        for rule in rules:
            for start, end in _candidates(rule, text, low, present):
                if start == end or any(start < t.end and t.start < end for t in taken):
                    continue
                if rule.bounded and (
                    (start > 0 and text[start - 1].isalnum()) or (end < len(text) and text[end].isalnum())
                ):
                    continue
                if rule.accept(self._entropy, text[start:end]):
                    taken.append(Span(rule.kind, start, end))
