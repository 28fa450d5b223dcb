"""How the supersede rules read a memory's text: its tokens (values kept whole, words stemmed and
weighed by their rarity), its statements, and the English phrases that announce a change.

The restatement rule (`app.links.supersede_rule`) and the named-change rule
(`app.links.supersede_named`) both read text this way; this module holds no decision.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from app.core.english import stem, zipf


class WordBars(Hashable, Protocol):
    """The rarity bars a text is read with (`supersede_rule.Thresholds` has them); hashable, as the
    readings of a text are kept per text and bars."""

    @property
    def common_zipf(self) -> float: ...
    @property
    def label_zipf(self) -> float: ...
    @property
    def specific_zipf(self) -> float: ...


# A token: a run of word characters joined by the marks technical values are written with
# (`eu-west-1`, `3.12`, `node:20-alpine`, `api.example.com/v1`, `C++`, `#incidents`), ending on a
# word character or one of `+#`; punctuation around it is left out.
_TOKEN = re.compile(r"#?\w(?:[\w.:/+#@-]*[\w+#])?")
_SENTENCE_END = re.compile(r"[.!?:;]\s+|\n+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_EPISODE_LABEL = re.compile(r"^(?:User|Assistant):\s*", re.MULTILINE)
_TOOLS_LINE = re.compile(r"^Tools:.*$", re.MULTILINE)

CHANGE_CUES: tuple[str, ...] = (
    "now", "moved", "move", "switched", "switch", "migrated", "migrate", "replaced", "replace",
    "instead", "no longer", "renamed", "rename", "upgraded", "upgrade", "downgraded", "changed",
    "took over", "anymore", "any more", "rewritten", "rewrote",
)  # fmt: skip
"""Phrases that announce that a fact changed (matched as whole words, lower case)."""

ADDITION_CUES: tuple[str, ...] = ("also", "as well", "in addition", "too", "additionally", "besides")
"""Phrases that announce a fact added beside the old one, which then stays true."""

RETIRED_CUES: tuple[str, ...] = (
    "instead of", "no longer", "removed", "dropped", "cancelled", "canceled", "retired", "from", "frozen",
    "deprecated",
)  # fmt: skip
"""Phrases by which a change names the old value as gone ("from X to Y", "X was removed"): with
a change cue, an old specific the new text still names counts as gone."""

PAST_CUES: tuple[str, ...] = ("before", "used to", "previously", "formerly", "originally", "back when")
"""Phrases that put the new text in the past: it tells history, not the current state."""


CACHED_TEXTS = 1024
"""Texts whose reading (tokens, cues) is kept, per process. A stored batch judges each new memory
against its few nearest older ones, and an older memory is near several new ones: without it the
same texts were read again for every pair, most of the rule's time in a store of 100."""

MAX_LABEL_DIGITS = 2
"""A number of more digits is a value even after a noun (a port, a year, a size)."""


@dataclass(frozen=True, slots=True)
class Token:
    text: str
    """Lower case; a word stemmed."""
    shown: str
    """As written (for the reason)."""
    weight: float
    specific: bool
    at: int = -1
    """Where it starts in the text read."""


def statements(text: str) -> list[str]:
    """The sentences of `text` (an exchange says several things, one per sentence)."""
    return [s for s in _SENTENCE.split(text) if s.strip()]


def is_question(text: str) -> bool:
    """A text that only asks: it ends with a question mark (an episode: its prompt did and nothing
    answered it)."""
    body = _TOOLS_LINE.sub("", text).strip()
    if "Assistant:" in body:
        return False
    return _EPISODE_LABEL.sub("", body).rstrip().endswith("?")


def fact_text(text: str, kind: str) -> str:
    """What a memory says: an episode without its `User:`/`Assistant:` labels, tool digest and
    questions (an exchange's question asks; its statements say what holds)."""
    if kind != "episode":
        return text
    text = _EPISODE_LABEL.sub("", _TOOLS_LINE.sub("", text))
    return "\n".join(s for s in _SENTENCE.split(text) if s.strip() and not s.rstrip().endswith("?"))


def tokens(text: str, thresholds: WordBars) -> tuple[Token, ...]:
    """`text`'s tokens with their weight, weightless ones (common words) left out. Read once per
    text and bars (`CACHED_TEXTS`): the tokens are immutable, so callers share them."""
    return _tokens(text, thresholds)


@lru_cache(maxsize=CACHED_TEXTS)
def _tokens(text: str, thresholds: WordBars) -> tuple[Token, ...]:
    found: list[Token] = []
    starts = {0} | {m.end() for m in _SENTENCE_END.finditer(text)}
    previous: re.Match[str] | None = None
    for match in _TOKEN.finditer(text):
        shown = match[0]
        lower = shown.lower()
        has_digit = any(c.isdigit() for c in lower)
        if has_digit or not lower.isalpha():
            label = _is_label(match, previous, text, thresholds)
            found.append(Token(lower, shown, _rarity(lower, thresholds) + 1.0, not label, match.start()))
            previous = match
            continue
        previous = match
        weight = _rarity(lower, thresholds)
        # capitalised inside a sentence: a name; opening one, only rarity tells (an "Awesome!" is none)
        # and not a common word written so ("I", "May")
        capital = shown[0].isupper() and match.start() not in starts and weight > 0
        named = capital or (shown.isupper() and len(shown) > 1)
        if weight <= 0 and not named:
            continue
        rare = zipf(lower) < thresholds.specific_zipf
        found.append(
            Token(stem(lower), shown, max(weight, 1.0 if named else weight), rare or named, match.start())
        )
    return tuple(found)


@dataclass(frozen=True, slots=True)
class Word:
    """A token of a text as written, common words included."""

    key: str
    """Lower case, a word stemmed: what `Token.text` would be."""
    lower: str
    at: int


def words(text: str) -> list[Word]:
    """Every token of `text`, common words included, with where it starts: the neighbourhood of a
    value, as written."""
    found: list[Word] = []
    for match in _TOKEN.finditer(text):
        lower = match[0].lower()
        found.append(Word(stem(lower) if lower.isalpha() else lower, lower, match.start()))
    return found


def _is_label(number: re.Match[str], previous: re.Match[str] | None, text: str, thresholds: WordBars) -> bool:
    """A small whole number right after a lower-case noun ("step 2", "memory 3", "item 12") numbers
    one of several things that hold together, not a value that replaces another: it belongs to the
    subject, and is no specific. Ports, versions and settings ("port 8080", "Node 20", "is 4") are
    not written so."""
    if previous is None or not number[0].isdigit() or len(number[0]) > MAX_LABEL_DIGITS:
        return False
    if text[number.end() : number.end() + 1] == "%":  # a share: a quantity ("above 80%")
        return False
    word = previous[0]
    adjacent = not text[previous.end() : number.start()].strip()
    return adjacent and word.isalpha() and word.islower() and zipf(word) < thresholds.label_zipf


def _rarity(word: str, thresholds: WordBars) -> float:
    return max(0.0, thresholds.common_zipf - zipf(word))


@lru_cache(maxsize=CACHED_TEXTS)
def find_cue(text: str, phrases: tuple[str, ...]) -> str | None:
    """The first of `phrases` that `text` holds as whole words (lower case), if any. Kept per text
    and phrase list (`CACHED_TEXTS`): the rule asks it of the same new text for every candidate."""
    lower = text.lower()
    for phrase in phrases:
        if _whole_words(phrase).search(lower):
            return phrase
    return None


@lru_cache(maxsize=256)
def _whole_words(phrase: str) -> re.Pattern[str]:
    return re.compile(rf"\b{re.escape(phrase)}\b")
