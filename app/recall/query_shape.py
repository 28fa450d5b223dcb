"""The shape of a recall query, read from its words: which question it is, so fusion can weigh the legs
that answer that kind of question best (`RecallSettings.shape_leg_factors`, applied in
`LegPlan.for_request`).

A deterministic rule, no model: the query is cut into words by wordfreq's tokenizer and each word
compared by its Snowball stem, so "recommendations" and "recommend" are one. The first shape whose
cue the query holds wins, in this order:

- **advice**: the asker wants a suggestion for themselves, not a stored fact ("Can you recommend a
  documentary?", "Any tips for my slow cooker?"). An advice word ("recommend", "suggest", "advice",
  "tip", "should"...) together with a first- or second-person word ("I", "my", "you"...): "What did
  Caroline recommend?" asks what was said, in the third person, and is no advice ask. What such a
  question needs is a memory about the asker's tastes and circumstances, which shares meaning with
  the question more often than its words: the dense leg's kind of match.
- **temporal**: the question asks when, how long, or in which order ("When did...", "How many days
  ago...", "Which happened first..."), or names a date: a year, or a month or weekday name written
  as a name, capitalised after the first word ("in May", not "may I" or "it may").
- **other**: everything else.

The cue words are words of English (how a person asks for advice, how a question asks about time),
not of any library's vocabulary, so they are listed here; month and weekday names come from the
standard library's `calendar`.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from functools import cache
from typing import Literal

from app.core.english import stem

QueryShape = Literal["advice", "temporal", "other"]

ADVICE_WORDS = ("recommend", "recommendation", "suggest", "suggestion", "advice", "advise", "tip", "should")
"""Words that ask for a suggestion (compared by stem: "tips", "suggestions" and "advising" count)."""
PERSONAL_WORDS = ("i", "me", "my", "mine", "myself", "we", "us", "our", "you", "your")
"""The asker and the one asked: an advice word in a sentence about them asks for advice."""
TEMPORAL_WORDS = (
    "when",
    "ago",
    "before",
    "after",
    "first",
    "last",
    "earlier",
    "later",
    "since",
    "until",
    "long",
    "minute",
    "hour",
    "day",
    "week",
    "weekend",
    "month",
    "year",
    "yesterday",
    "today",
    "tomorrow",
)
"""Words that ask when, for how long, or in which order."""
_YEAR = re.compile(r"^(1[89]|20)\d\d$")


@dataclass(frozen=True, slots=True)
class Shape:
    """A query's shape and the word of the query that decided it (None for `other`)."""

    name: QueryShape
    cue: str | None = None


def query_shape(query: str) -> Shape:
    """The shape of `query` (the module's docstring gives the rule)."""
    words = _words(query)
    stems = [stem(word) for word in words]
    if any(word in PERSONAL_WORDS for word in words):
        for word, word_stem in zip(words, stems, strict=True):
            if word_stem in _stems(ADVICE_WORDS):
                return Shape("advice", word)
    for word, word_stem in zip(words, stems, strict=True):
        if word_stem in _stems(TEMPORAL_WORDS) or _YEAR.match(word):
            return Shape("temporal", word)
    if date := _date_name(query):
        return Shape("temporal", date.lower())
    return Shape("other")


def _words(text: str) -> list[str]:
    from wordfreq.tokens import tokenize  # its tables load on first use, not at import

    # a contraction is its first word: "i've" is "i", "you're" is "you"
    return [str(word).replace("\u2019", "'").split("'")[0] for word in tokenize(text, "en")]


@cache
def _stems(words: tuple[str, ...]) -> frozenset[str]:
    return frozenset(stem(word) for word in words)


def _date_name(text: str) -> str | None:
    """The first month or weekday name `text` writes as a name: capitalised, after its first word
    (the first word of a question is capitalised whatever it is: "May I...")."""
    found = _date_names().search(text)
    return found[1] if found else None


@cache
def _date_names() -> re.Pattern[str]:
    """Month and weekday names as names, after the first word (the standard library's English
    `calendar` names)."""
    names = "|".join([*calendar.month_name[1:], *calendar.day_name])
    return re.compile(rf"(?<=\S)\s+\W*({names})\b")


def warm_up() -> None:
    """Load the tokenizer and the stemmer now, not on the first recall's path."""
    query_shape("When should I warm up?")
