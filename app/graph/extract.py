"""Deterministic, LLM-free concept extraction: the things a person would name in a memory.

A concept is a name (a capitalised word or run of them inside a sentence: a person, place, project,
product), something written the way technical values are (a path, a file, a version, an identifier,
a CamelCase technology, a command in backticks), a tag or keyword the memory carries, or a rare
word or a short phrase holding one. How common a word is comes from wordfreq's English list (its
Zipf scale, `app.graph.words`): a word most English text uses ("every", "run", "mode", "service",
"test") says nothing about what one memory is about, so it is never a concept alone and never opens
or closes a phrase. Whether a word can name a thing at all comes from lemminflect's lexicon of parts
of speech: a rare verb or adjective ("rotate", "creamy") is no concept, and a phrase is a noun
compound ("cache key"), not an everyday description ("tough breakup") or a clause ("avoid
collision"). The few words the lists cannot tell apart from content words (evaluative adjectives
such as "amazing") are listed in `FILLERS`.

Regular expressions and cached lookups only: microseconds per memory. Concepts are normalised (case,
plural, punctuation) so surface forms of one idea meet in one node.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.core.english import zipf
from app.graph.words import is_common, is_everyday_adjective, names_a_thing, readings

FUNCTION_ZIPF = 5.0
"""A word at least this common ("every", "instead", "the", "really") ends a phrase: a phrase holding
one is a fragment of a clause ("credentials every"), not a name for a thing."""

NAME_BREAK_ZIPF = 6.0
"""A capitalised word inside a sentence is part of a name unless it is this common: "I", "The"."""

OPENING_NAME_ZIPF = 3.0
"""A capitalised word opening a sentence is a name when it is this rare ("Terraform", "Zephyr") or
written capitalised inside a sentence elsewhere in the memory; a commoner one ("Rotate", "Run") is
read as the word it is."""

_NOT_A_THING = ("ed", "ly")
"""Endings of past participles and adverbs ("swamped", "quickly"): such a word alone is no concept."""

FILLERS = frozenset(
    """
    amazing awesome beautiful best cool favorite favourite fun glad good great happy lovely nice
    super totally wonderful
    """.split()  # noqa: SIM905 - a word list reads better as text
)
"""Evaluative words below FUNCTION_ZIPF that would open a phrase ("amazing pottery") without
naming anything."""

_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9+#'._/-]*[A-Za-z0-9+#]|[A-Za-z0-9]")
_SENTENCE = re.compile(r"[.!?;:\n]+(?:\s+|$)|\s*[,&()\[\]\"]\s*|\s+-\s+")
_KEYWORD_SPLIT = re.compile(r"[,;\n]+")
_BACKTICKED = re.compile(r"`([^`\n]{2,60})`")
_VERSION = re.compile(r"v?\d+(?:\.\d+)+[a-z0-9]*")
_FILE = re.compile(r"[\w.-]*\w\.[a-z][a-z0-9]{0,5}")

PRIORITY = {
    "name": 0,
    "path": 0,
    "file": 0,
    "version": 0,
    "command": 0,
    "identifier": 0,
    "tag": 1,
    "keyword": 1,
    "phrase": 2,
    "term": 3,
}
"""Kinds, most specific first: a memory's concepts are chosen in this order."""


@dataclass(frozen=True, slots=True)
class Concept:
    name: str  # normalised key, unique per namespace
    display: str  # the surface form first seen
    kind: str  # a key of PRIORITY


def singular(word: str) -> str:
    """Cheap English singularisation for concept keys (not for display)."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith(("ss", "us", "is", "'s")):
        return word[:-2] if word.endswith("'s") else word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "zes", "sses")):
        return word[:-2]
    return word[:-1]


def normalise(text: str, fold_plural: bool = True) -> str:
    """The concept key of a surface form: lower case, no possessive, the last word singular
    (`fold_plural`; not for a name: "Kubernetes", "James")."""
    words = [w.strip("'._/-") for w in text.lower().split()]
    words = [w[:-2] if w.endswith("'s") else w for w in words if w]
    if not words:
        return ""
    if fold_plural and words[-1].isalpha():
        words[-1] = singular(words[-1])
    return " ".join(words)


def _is_capitalised(token: str) -> bool:
    return token[0].isupper() or (token.isupper() and len(token) > 1) or any(c.isupper() for c in token[1:])


def technical_kind(token: str) -> str | None:
    """The kind of a token written as technical values are, or None for a plain word: a path
    (`app/graph`), a version (`v2.3`, `3.12`), a file (`extract.py`), an identifier (`ts_rank`,
    `k8s`, `next.js`, `eu-west-1`) or a CamelCase technology (`CloudNativePG`, `pgVector`)."""
    if not any(c.isalpha() for c in token):
        return None
    lower = token.lower()
    if "/" in token[1:-1]:
        return "path"
    if _VERSION.fullmatch(lower):
        return "version"
    if "." in token[1:-1] and _FILE.fullmatch(lower) and not is_common(lower.rsplit(".", 1)[1]):
        return "file"
    if any(c.isdigit() for c in token) or any(c in "._+#" for c in token[1:-1]):
        return "identifier"
    if "-" in token[1:-1] and not is_common(lower) and not is_everyday_adjective(lower.rsplit("-", 1)[1]):
        return "identifier"  # "time-machine", "eu-west"; "gluten-free" is an adjective
    if any(c.isupper() for c in token[1:]) and any(c.islower() for c in token):
        return "name"  # CamelCase: a product or technology
    return None


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


def _is_compound(tail: list[str]) -> bool:
    """Words that make a noun compound holding a rare word: "cache key", "dessert recipe"."""
    # English compounds modify with the singular ("cache keys"); a modifier ending in -s is mostly
    # a verb ("reads secrets"), and a head ending in -ed or -ly closes a clause
    modifiers_singular = not any(w.endswith("s") and not w.endswith("ss") for w in tail[:-1])
    # a gerund heads a compound as a noun ("connection pooling", "load balancing")
    head = names_a_thing(tail[-1]) or tail[-1].endswith("ing")
    return (
        modifiers_singular
        and head
        and not tail[-1].endswith(_NOT_A_THING)
        and all(names_a_thing(w) for w in tail[:-1])
        and not any(is_everyday_adjective(w) for w in tail[:-1])
        and any(not is_common(w) for w in tail)
    )


def _phrases(words: list[str]) -> list[tuple[str, str]]:
    """Phrases and rare terms of a run of lower-case content words (none as common as
    FUNCTION_ZIPF): the run's last two or three words when one of them is rare and they make a
    noun compound, each rare word that can be a noun on its own. Fillers are cut from the front."""
    found = [
        (w, "term")
        for w in words
        if len(w) >= 4 and not is_common(w) and not w.endswith(_NOT_A_THING) and names_a_thing(w)
    ]
    while words and words[0] in FILLERS:
        words = words[1:]
    # the run's last three words when it has no more, else its last two; a shorter tail when the
    # longer one is no compound ("tuned connection pooling" names "connection pooling")
    for size in (3, 2) if len(words) <= 3 else (2,):
        tail = words[-size:]
        if len(tail) == size and _is_compound(tail):
            found.append((" ".join(tail), "phrase"))
            break
    return found


NAME_CONNECTORS = frozenset({"of", "the"})
"""Lower-case words a name may hold between capitalised ones ("Bank of America")."""


def _name_follows(rest: list[str]) -> bool:
    """The tokens after a connector go on with a capitalised word of a name (after more connectors)."""
    for token in rest:
        if token.lower() in NAME_CONNECTORS:
            continue
        return token[0].isupper() and zipf(token) < NAME_BREAK_ZIPF
    return False


def _spans(sentence: str, names: frozenset[str]) -> list[tuple[str, str]]:
    """(display, kind) candidates from one sentence; `names` are the words the memory writes
    capitalised inside a sentence."""
    found: list[tuple[str, str]] = []
    run: list[str] = []
    phrase: list[str] = []

    def flush_name() -> None:
        if run:
            found.append((" ".join(run[:4]), "name"))
        run.clear()

    def flush_phrase() -> None:
        found.extend(_phrases(phrase[:]))
        phrase.clear()

    tokens = _TOKEN.findall(sentence)
    for position, token in enumerate(tokens):
        token = token[:-2] if token.endswith("'s") else token
        lower = token.lower()
        if run and lower in NAME_CONNECTORS and _name_follows(tokens[position + 1 :]):
            run.append(token)  # "Game of Thrones", "Lord of the Rings": one name
            continue
        if "'" in token:  # a contraction ("how'd", "I'm")
            flush_name()
            flush_phrase()
            continue
        kind = technical_kind(token)
        if kind is not None and kind != "name":
            flush_name()
            flush_phrase()
            found.append((token, kind))
            continue
        if _is_capitalised(token) and len(token) > 1:
            if position > 0:
                name = zipf(lower) < NAME_BREAK_ZIPF
            else:  # at a sentence's start capitals say little (`OPENING_NAME_ZIPF`)
                rare = zipf(lower) < OPENING_NAME_ZIPF and names_a_thing(lower)
                rare = rare or (not readings(lower) and not is_common(lower))  # "Gina:", "McGregor"
                name = kind == "name" or token.isupper() or lower in names or rare
                name = name and not lower.endswith(_NOT_A_THING)
            if name:
                flush_phrase()
                run.append(token)
                if position == 0:
                    flush_name()  # an opening name stands alone ("Upgraded Postgres" is two words)
                continue
            if position == 0:  # a rare opening word may be a name or a verb: a term, in no phrase
                found.extend(_phrases([lower]))
                continue
        flush_name()
        if lower.isalpha() and len(lower) >= 3 and zipf(lower) < FUNCTION_ZIPF:
            phrase.append(lower)
        else:
            flush_phrase()
    flush_name()
    flush_phrase()
    return found


def _commands(content: str) -> list[tuple[str, str]]:
    """Spans in backticks: a command (`make lint`) or, written as one, a path, file or identifier."""
    found = []
    for span in _BACKTICKED.findall(content):
        span = span.strip()
        if not span or len(span.split()) > 4:
            continue
        kind = technical_kind(span) if " " not in span else None
        found.append((span, kind or "command"))
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
    candidates += _commands(content)
    sentences = _SENTENCE.split(_BACKTICKED.sub(" , ", content))
    names = frozenset(
        token.lower()
        for sentence in sentences
        for token in _TOKEN.findall(sentence)[1:]
        if token[0].isupper() and zipf(token) < NAME_BREAK_ZIPF
    )
    for sentence in sentences:
        candidates += _spans(sentence, names)
    candidates.sort(key=lambda c: PRIORITY[c[1]])
    seen: dict[str, Concept] = {}
    for display, kind in candidates:
        name = normalise(display, fold_plural=kind in ("phrase", "term", "tag", "keyword"))
        if len(name) < 2 or len(name) > 80 or name in seen or _looks_random(display):
            continue
        if kind == "term" and is_common(name):  # a plural's singular can be common ("statements")
            continue
        seen[name] = Concept(name=name, display=display.strip(), kind=kind)
        if len(seen) >= max_concepts:
            break
    return list(seen.values())


def query_concept_names(query: str, max_concepts: int = 16) -> list[str]:
    """Concept keys a query mentions, used to seed the graph leg."""
    return [c.name for c in extract_concepts(query, max_concepts=max_concepts)]


def warm_up() -> None:
    """Load the word lists extraction reads (wordfreq's frequencies, lemminflect's lexicon: about a
    second) now, not in the first recall's concept seeds or the first store's indexing."""
    extract_concepts("Warm up the concept lexicon: rotate pgvector caches before Tuesday.")
