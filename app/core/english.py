"""English word facts every domain that weighs words reads the same way: how common a word is
(wordfreq's Zipf scale) and its stem (Snowball). Concepts (app/graph), automatic supersede
(app/links) and query shapes (app/recall) each judge words by these, so they agree on them.

The word lists load on first use, never at import; lookups are cached per process, bounded, since
the words come from users' text.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

_CACHED_WORDS = 65536


@lru_cache(maxsize=_CACHED_WORDS)
def zipf(word: str) -> float:
    """How common a word is in English (wordfreq's Zipf scale: 7 "the", 3 a rare word, 0 unknown)."""
    from wordfreq import zipf_frequency

    return float(zipf_frequency(word.lower(), "en"))


@lru_cache(maxsize=_CACHED_WORDS)
def stem(word: str) -> str:
    """The word's English Snowball stem ("deploys", "deploying" -> "deploy")."""
    return str(_stemmer().stemWord(word))


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import snowballstemmer  # untyped

    return snowballstemmer.stemmer("english")
