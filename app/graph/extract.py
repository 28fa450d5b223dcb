"""Deterministic, LLM-free concept extraction: entity-like spans, short noun phrases, tags, keywords.

A few microseconds to a millisecond per memory: regular expressions and set lookups only.
Concepts are normalised (case, plural, punctuation) so surface forms of one idea meet in one node.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Function words and generic verbs/adjectives that never make a useful concept on their own.
STOPWORDS = frozenset(
    """
    a about above after again against all also always am amazing an and any anything are aren't as at
    awesome be because been before being below between both but by came can can't cannot come cool could
    couldn't day days definitely did didn't do does doesn't doing don't down during each even everything
    feel felt few first for from further get go goes going gone good got great had hadn't has hasn't
    have haven't having he he'd he'll he's hello her here here's hers herself hey hi him himself his how
    how's i i'd i'll i'm i've if in into is isn't it it's its itself just knew know known last let's
    like look looked looking lot lots made make makes making many maybe me more most much mustn't my
    myself never new next nice no nor not nothing now of off oh ok okay old on once one only or other
    ought our ours ourselves out over own probably really really recently said same saw say says see
    seen shan't she she'd she'll she's should shouldn't so some something still stuff such sure take
    tell than thank thanks that that's the their theirs them themselves then there there's these they
    they'd they'll they're they've thing things think this those thought through time times to today
    told tomorrow too took totally two under until up use used using very want wanted was wasn't way
    ways we we'd we'll we're we've week weeks well went were weren't what what's when when's where
    where's which while who who's whom why why's will with won't would wouldn't wow yeah year years yes
    yesterday you you'd you'll you're you've your yours yourself yourselves
    """.split()  # noqa: SIM905 - a word list reads better as text
)

_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9+#'._/-]*[A-Za-z0-9+#]|[A-Za-z0-9]")
_SENTENCE = re.compile(r"[.!?;:\n]+(?:\s+|$)|\s*[,&()\[\]\"]\s*|\s+-\s+")
_KEYWORD_SPLIT = re.compile(r"[,;\n]+")


@dataclass(frozen=True, slots=True)
class Concept:
    name: str  # normalised key, unique per namespace
    display: str  # the surface form first seen
    kind: str  # entity | tag | keyword | phrase | term


def singular(word: str) -> str:
    """Cheap English singularisation for concept keys (not for display)."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith(("ss", "us", "is", "'s")):
        return word[:-2] if word.endswith("'s") else word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "zes", "sses")):
        return word[:-2]
    return word[:-1]


def normalise(text: str) -> str:
    words = [w.strip("'._/-") for w in text.lower().split()]
    words = [w for w in words if w]
    if not words:
        return ""
    if words[-1].isalpha():
        words[-1] = singular(words[-1])
    return " ".join(words)


def _is_capitalised(token: str) -> bool:
    return token[0].isupper() or (token.isupper() and len(token) > 1) or any(c.isupper() for c in token[1:])


def _looks_technical(token: str) -> bool:
    """Identifiers such as pgvector, k8s, next.js, ci/cd: keep even in lower case."""
    return any(c.isdigit() for c in token) or any(c in "._/+#" for c in token[1:-1])


_RANDOM_RUN = re.compile(r"[A-Za-z0-9+/_=-]{20,}")


def _looks_random(display: str) -> bool:
    """A run of letters of both cases and digits 20 characters or longer (`dckr_pat_2bH8kQz…`,
    base64): a credential the detector missed or an opaque blob, never an idea worth a node. The
    text is redacted before it is stored, so this only keeps a credential no rule knows out of the
    concept names a namespace lists; lower-case hex (a commit, a digest) stays a concept."""
    for run in _RANDOM_RUN.findall(display):
        if any(c.isupper() for c in run) and any(c.islower() for c in run) and any(c.isdigit() for c in run):
            return True
    return False


def _spans(sentence: str) -> list[tuple[str, str]]:
    """(display, kind) candidates from one sentence."""
    tokens = _TOKEN.findall(sentence)
    found: list[tuple[str, str]] = []
    run: list[str] = []
    phrase: list[str] = []

    def flush_entity() -> None:
        words = run[:]
        while words and words[0].lower() in STOPWORDS:
            words.pop(0)
        if words and (len(words) > 1 or words[0].lower() not in STOPWORDS):
            found.append((" ".join(words[:4]), "entity"))
        run.clear()

    def flush_phrase() -> None:
        if 2 <= len(phrase) <= 3:
            found.append((" ".join(phrase), "phrase"))
        elif len(phrase) > 3:
            found.append((" ".join(phrase[-2:]), "phrase"))
        if len(phrase) >= 1:
            head = phrase[-1]
            if len(head) >= 4:
                found.append((head, "term"))
        phrase.clear()

    for token in tokens:
        lower = token.lower()
        if _is_capitalised(token) and lower not in STOPWORDS:
            flush_phrase()
            run.append(token)
            continue
        if run:
            flush_entity()
        if lower in STOPWORDS or lower.isdigit() or len(lower) < 3:
            flush_phrase()
            continue
        if _looks_technical(lower):
            flush_phrase()
            if not any(c.isalpha() for c in lower):
                continue
            found.append((lower, "entity"))
            continue
        phrase.append(lower)
    if run:
        flush_entity()
    flush_phrase()
    return found


def extract_concepts(
    content: str,
    tags: list[str] | None = None,
    expanded_keywords: str | None = None,
    max_concepts: int = 12,
) -> list[Concept]:
    """Concepts of one memory, most specific kinds first, deduplicated by normalised name."""
    candidates: list[tuple[str, str]] = []
    candidates += [(t, "tag") for t in tags or []]
    if expanded_keywords:
        candidates += [(k.strip(), "keyword") for k in _KEYWORD_SPLIT.split(expanded_keywords) if k.strip()]
    for sentence in _SENTENCE.split(content):
        candidates += _spans(sentence)
    priority = {"entity": 0, "tag": 1, "keyword": 1, "phrase": 2, "term": 3}
    candidates.sort(key=lambda c: priority[c[1]])
    seen: dict[str, Concept] = {}
    for display, kind in candidates:
        name = normalise(display)
        if len(name) < 2 or name in STOPWORDS or len(name) > 80 or name in seen or _looks_random(display):
            continue
        seen[name] = Concept(name=name, display=display.strip(), kind=kind)
        if len(seen) >= max_concepts:
            break
    return list(seen.values())


def query_concept_names(query: str, max_concepts: int = 16) -> list[str]:
    """Concept keys a query mentions, used to seed the graph leg."""
    return [c.name for c in extract_concepts(query, max_concepts=max_concepts)]
