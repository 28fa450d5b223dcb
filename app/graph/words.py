"""What English says about a word, from maintained word lists: how common it is (wordfreq) and
whether it can name a thing (lemminflect's English lexicon of parts of speech).

A concept is something a person would name: a noun, a name or a technical term. Frequency alone
lets a rare verb or adjective through ("rotate", "creamy", "heartfelt"); lemminflect knows which
parts of speech each English word form takes, without a tagger or a model, so a word with no noun
reading is no concept. A word the lexicon lacks is judged by frequency: when English text rarely
uses it, it is a name or a technical term ("pgvector", "terraform"); when it is common, it is
slang, an interjection or a pronoun ("woah", "sorta", "oneself").
"""

from __future__ import annotations

from functools import lru_cache

from lemminflect import getAllLemmas

from app.core.english import zipf

COMMON_ZIPF = 4.0
"""A word at least this common (wordfreq's Zipf scale, lower case) is an everyday English word
(about the 7,000 most frequent): never a concept alone, and one written capitalised at the start of
a sentence ("Run the tests") is that word, not a name."""

UNLISTED_ZIPF = 3.0
"""A word the lexicon lacks names a thing only when it is rarer than this in English: a technical
term or a name ("kubectl", "redis") rather than slang or a pronoun ("sorta", "oneself")."""

_NOUN_TAGS = ("NOUN", "PROPN")


def is_common(word: str) -> bool:
    """An everyday English word (`COMMON_ZIPF`)."""
    return zipf(word) >= COMMON_ZIPF


@lru_cache(maxsize=65536)
def readings(word: str) -> frozenset[str]:
    """The parts of speech the English lexicon gives this word form (universal tags: NOUN, VERB,
    ADJ, ADV…); empty when the lexicon lacks it."""
    return frozenset(getAllLemmas(word.lower()))


def names_a_thing(word: str) -> bool:
    """The word can be a noun: the lexicon gives it a noun reading, or lacks it and it is rare
    (`UNLISTED_ZIPF`). "pottery", "cache" and "pgvector" can; "rotate", "creamy" and "sorta" cannot."""
    found = readings(word)
    if not found:
        return zipf(word) < UNLISTED_ZIPF
    return any(tag in found for tag in _NOUN_TAGS)


def is_everyday_adjective(word: str) -> bool:
    """A common word with an adjective reading ("tough", "strict", "public"): as a phrase's modifier
    it makes an everyday description ("tough breakup"), not the name of a thing."""
    return is_common(word) and "ADJ" in readings(word)
