"""A change said in one statement: the narrower half of the automatic supersede rule.

The restatement rule (`app.links.supersede_rule`) aligns two texts and wants them to be one
statement with one value swapped. A captured exchange, or a long memory, says the change in one
clause among others ("The ingest drops positions under load. FYI positions are stored in
TimescaleDB..." and, weeks later, "Positions moved from Timescale to ClickHouse last sprint; the
reader still queries the old tables"): aligned whole, too much differs, and the older text keeps
reaching the model unmarked. This module finds the two shapes in which a statement says outright
that an older one no longer holds, each deterministic and quoted in the link's reason:

- **A value named as gone.** A clause that announces a change and names the old value as left
  behind: "moved CI *from* GitHub Actions to Buildkite", "we *replaced* ingress-nginx with Traefik",
  "moving device events *off* JetStream to Redpanda", "finished *replacing* Huey", "*instead of*
  Jest", "*no longer* uses Celery", "Jest *was removed*". The older memory must name that value
  (a specific: a name or a rare word; "Timescale" names "TimescaleDB" when one begins the other)
  and not already name the new one (else it compares the two, or tells the move itself).
- **The same slot, a new value.** A clause that announces a change ("now", "moved", "raise",
  "bumped", ...) and holds a value (a token with a digit) where a clause of the older memory holds
  a different value of the same form in the same place: the same word before and after it ("every
  *30* seconds" → "every *10* seconds"), the same two words after it ("*300* requests per minute"
  → "*900* requests per minute") or the same two before, or a value whose own form anchors it (three
  or more parts sharing the first: "eu-north-1" → "eu-central-1"). Neither clause may carry a
  qualifier the other lacks, a rare word before the value ("the request timeout is 30 seconds" is
  not "the *database statement* timeout is now 5 seconds"), and the two clauses must share words of
  their subject.

Both refuse a clause that tells history ("before", "used to": `PAST_CUES`) or adds a fact beside
the old one ("also": `ADDITION_CUES`). The caller (`supersede_rule.judge`) asks for one only when
the restatement rule was not confident, and applies the gates every link obeys (category, an
episode never replacing a curated memory on its own, tags, similarity).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from app.core.english import zipf
from app.links.supersede_text import (
    ADDITION_CUES,
    CHANGE_CUES,
    PAST_CUES,
    Token,
    WordBars,
    find_cue,
    tokens,
    words,
)

How = Literal["named-gone", "same-slot"]

_CLAUSE = re.compile(r"(?<=[.!?;])\s+|\n+")
_PHRASE = r"[^,;:.!?]+?"
"""An old or new value as a change names it: up to the next punctuation or linking word."""
_END = r"(?=\s*(?:[,;:.!?]|$|\s(?:and|but|so|last|next|this|since|in|on|for|at)\b))"
_CHANGE_VERB = re.compile(
    r"\b(?:mov(?:e|ed|es|ing)|migrat(?:e|ed|es|ing)|switch(?:ed|es|ing)?|chang(?:e|ed|es|ing)|went|"
    r"go(?:es|ing)?|transition(?:ed|s|ing)?|upgrad(?:e|ed|es|ing)|downgrad(?:e|ed|es|ing)|"
    r"bump(?:ed|s|ing)?)\b",
    re.IGNORECASE,
)
"""A verb of change, required beside "from X to Y" / "off X to Y" ("pull the strings from
Lokalise to the repository" names no change)."""


@dataclass(frozen=True, slots=True)
class GonePattern:
    """A way a clause names a value as left behind (`old`) and, when it says, what took its place
    (`new`)."""

    pattern: re.Pattern[str]
    needs_verb: bool = False
    """Whether it names a change only beside a verb of change ("from X to Y" alone does not)."""


GONE_PATTERNS: tuple[GonePattern, ...] = (
    GonePattern(
        re.compile(rf"\b(?:from|off)\s+(?P<old>{_PHRASE})\s+(?:to|onto)\s+(?P<new>{_PHRASE}){_END}", re.I),
        needs_verb=True,
    ),
    GonePattern(
        re.compile(
            rf"\breplac(?:e|ed|es|ing)\s+(?!(?:by|with)\b)(?P<old>{_PHRASE})"
            rf"(?:\s+(?:with|by)\s+(?P<new>{_PHRASE}))?{_END}",
            re.I,
        )
    ),
    GonePattern(re.compile(rf"\binstead\s+of\s+(?P<old>{_PHRASE}){_END}", re.I)),
    GonePattern(
        re.compile(
            rf"\bno\s+longer\s+(?:uses?|using|used|runs?|running|on|in|with)\s+(?P<old>{_PHRASE}){_END}", re.I
        )
    ),
    GonePattern(
        re.compile(
            r"\b(?P<old>[A-Z][\w.+#-]*(?:\s+[A-Z][\w.+#-]*)*)\s+(?:was|were|is|are|has\s+been|have\s+been)\s+"
            r"(?:removed|dropped|retired|deprecated|replaced)\b"
        )
    ),
    GonePattern(re.compile(rf"\baway\s+from\s+(?P<old>{_PHRASE}){_END}", re.I), needs_verb=True),
    GonePattern(
        re.compile(
            rf"\b(?:don't|do\s+not|doesn't|does\s+not)\s+(?:use|run)\s+(?P<old>{_PHRASE})\s+any\s*more\b",
            re.I,
        )
    ),
)
"""Where a clause names a value as left behind, and what took its place when it says."""

SLOT_CUES: tuple[str, ...] = (
    *CHANGE_CUES, "raise", "raised", "raising", "lower", "lowered", "lowering", "bump", "bumped",
    "bumping", "increase", "increased", "increasing", "reduce", "reduced", "reducing",
)  # fmt: skip
"""Phrases by which a clause announces that a value changed (a limit is raised, a version bumped)."""

_CUE_WORDS = frozenset(SLOT_CUES)


def is_cue_word(word: str) -> bool:
    """Whether `word` announces a change: a cue says that something changed, not what, so it is
    never a qualifier."""
    return word.lower() in _CUE_WORDS


QUALIFIER_ZIPF = 4.5
"""A word before a value rarer than this (Zipf) qualifies what the value is of ("database statement
timeout", "avatar upload size", "staging"); commoner ones ("runs", "public", "limit") do not."""
PREFIX_CHARS = 5
"""Two names match when one begins the other and the shorter has at least this many characters
("Timescale" and "TimescaleDB")."""
ANCHOR_PARTS = 3
"""A value of this many parts or more whose first part is the same ("eu-north-1", "eu-central-1")
is anchored by its own form."""
SHARED_WORDS = 2
"""Words of their subject two clauses share at least to be about one thing."""


@dataclass(frozen=True, slots=True)
class NamedChange:
    """The new memory's clause that says the old one's value changed, and the two values."""

    how: How
    statement: str
    old_value: str
    """As the older memory writes it."""
    new_value: str | None
    """As the new memory writes it; None when the clause only says the old one is gone."""
    cue: str

    def reason(self, similarity: float) -> str:
        """The link's reason: what the new memory says, quoted, and the two values."""
        change = f"{self.old_value} \u2192 {self.new_value}" if self.new_value else f"{self.old_value} gone"
        kind = "names the old value as gone" if self.how == "named-gone" else "gives its setting a new value"
        return f"it {kind}: \u201c{self.statement}\u201d ({change}; similarity {similarity:.2f})"


def clauses(text: str) -> list[str]:
    """`text`'s clauses: its sentences, cut at semicolons too."""
    return [c.strip() for c in _CLAUSE.split(text) if c.strip()]


def named_change(new_text: str, old_text: str, bars: WordBars) -> NamedChange | None:
    """The first clause of `new_text` that says `old_text`'s value changed (see the module), or None."""
    for clause in clauses(new_text):
        if find_cue(clause, PAST_CUES) or find_cue(clause, ADDITION_CUES):
            continue
        found = _named_gone(clause, old_text, bars) or _same_slot(clause, new_text, old_text, bars)
        if found is not None:
            return found
    return None


def gone_names(text: str, bars: WordBars) -> list[str]:
    """The specifics `text` names as left behind (the `old` of its changes): the older memories
    that name them are candidates for its supersede whatever their embedding distance."""
    names: list[str] = []
    for clause in clauses(text):
        if find_cue(clause, PAST_CUES) or find_cue(clause, ADDITION_CUES):
            continue
        for old, _ in _gone_phrases(clause):
            names.extend(k.shown for k in _specifics(clause, old, bars))
    return list(dict.fromkeys(names))


def _gone_phrases(clause: str) -> Iterable[tuple[re.Match[str], re.Match[str] | None]]:
    """(the old value's match, the new value's match if named) for each change the clause names."""
    for gone in GONE_PATTERNS:
        if gone.needs_verb and not _CHANGE_VERB.search(clause):
            continue
        for match in gone.pattern.finditer(clause):
            yield match, match if match.groupdict().get("new") else None


def _specifics(clause: str, match: re.Match[str], bars: WordBars, group: str = "old") -> list[Token]:
    start, end = match.span(group)
    return [k for k in tokens(clause, bars) if k.specific and start <= k.at < end]


def _names(a: str, b: str) -> bool:
    """Whether two (stemmed, lower-case) tokens name one thing: equal, or one begins the other."""
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    return len(short) >= PREFIX_CHARS and long.startswith(short)


def _named_in(token: str, found: Sequence[str]) -> str | None:
    """The token of `found` that names `token`: the same one if there, else one beginning the other."""
    if token in found:
        return token
    return next((t for t in found if _names(token, t)), None)


def _named_gone(clause: str, old_text: str, bars: WordBars) -> NamedChange | None:
    old_tokens = tokens(old_text, bars)
    old_specific = [k.text for k in old_tokens if k.specific]
    shown = {k.text: k.shown for k in old_tokens}
    for match, with_new in _gone_phrases(clause):
        gone = _specifics(clause, match, bars)
        if not gone:
            continue
        matched = [_named_in(k.text, old_specific) for k in gone]
        if any(m is None for m in matched):
            continue
        new = _specifics(clause, with_new, bars, "new") if with_new is not None else []
        if any(_named_in(k.text, [k2.text for k2 in old_tokens]) for k in new):
            continue  # the older memory names the new value too: a comparison, or the move itself
        cue = _CHANGE_VERB.search(clause)
        return NamedChange(
            how="named-gone",
            statement=clause,
            old_value=" ".join(dict.fromkeys(shown[m] for m in matched if m is not None)),
            new_value=" ".join(k.shown for k in new) or None,
            cue=cue[0].lower() if cue else match.group(0).split()[0].lower(),
        )
    return None


def _shape(value: str) -> str:
    return re.sub(r"[a-z]+", "a", re.sub(r"\d+", "9", value.lower()))


def _parts(value: str) -> list[str]:
    return re.split(r"[-_.:/]", value.lower())


def _same_slot(clause: str, new_text: str, old_text: str, bars: WordBars) -> NamedChange | None:
    cue = find_cue(clause, SLOT_CUES)
    if cue is None:
        return None
    new_all = {k.text for k in tokens(new_text, bars)}
    old_all = {k.text for k in tokens(old_text, bars)}
    new_values, new_subject = _values(clause, bars)
    said_here = {k.text for k in tokens(clause, bars)}
    for old_clause in clauses(old_text):
        old_values, old_subject = _values(old_clause, bars)
        if not old_values or len(new_subject & old_subject) < SHARED_WORDS:
            continue
        for y in new_values:
            if y.text in old_all:
                continue
            for x in old_values:
                if x.text == y.text or x.text in said_here or _shape(x.text) != _shape(y.text):
                    continue
                if not _anchored(old_clause, x.at, clause, y.at, cue):
                    continue
                if qualified(clause, y.at, old_all) or qualified(old_clause, x.at, new_all):
                    continue
                return NamedChange("same-slot", clause, x.shown, y.shown, cue)
    return None


def _values(clause: str, bars: WordBars) -> tuple[list[Token], set[str]]:
    """A clause's values (specifics holding a digit) and the words of its subject (the rest)."""
    found = tokens(clause, bars)
    values = [k for k in found if k.specific and any(c.isdigit() for c in k.text)]
    return values, {k.text for k in found if k not in values}


def _neighbours(text: str, at: int, skip: str | None) -> tuple[list[str], list[str]]:
    """The words before (nearest first) and after the value starting at `at`, cue words left out."""
    found = [w for w in words(text) if skip is None or w.lower not in skip.split()]
    before = [w.key for w in reversed(found) if w.at < at]
    after = [w.key for w in found if w.at > at]
    return before, after


def _anchored(old_clause: str, old_at: int, clause: str, new_at: int, cue: str) -> bool:
    """Whether two values sit in one slot: the same word on each side, the same two after, the
    same two before, or a many-part value whose first part anchors it."""
    old_before, old_after = _neighbours(old_clause, old_at, None)
    new_before, new_after = _neighbours(clause, new_at, cue)
    old_value = words(old_clause[old_at:])[0].lower
    new_value = words(clause[new_at:])[0].lower
    one_each_side = old_before[:1] == new_before[:1] and old_after[:1] == new_after[:1]
    if old_before and old_after and one_each_side:
        return True
    if len(old_after) >= 2 and old_after[:2] == new_after[:2]:
        return True
    if len(old_before) >= 2 and old_before[:2] == new_before[:2]:
        return True
    old_parts, new_parts = _parts(old_value), _parts(new_value)
    same_form = len(new_parts) == len(old_parts) and old_parts[0] == new_parts[0]
    return len(old_parts) >= ANCHOR_PARTS and same_form


def qualified(clause: str, at: int, other_text: set[str]) -> bool:
    """Whether a rare word before the value, in its part of the clause (after a colon: "Product
    changed the firmware: devices now report every 10 seconds"), qualifies what the value is of and
    is missing from the other memory."""
    since = clause.rfind(":", 0, at) + 1
    return any(
        w.lower.isalpha()
        and zipf(w.lower) < QUALIFIER_ZIPF
        and w.key not in other_text
        and not is_cue_word(w.lower)
        for w in words(clause)
        if since <= w.at < at
    )
