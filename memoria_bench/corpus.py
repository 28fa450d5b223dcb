"""A large, realistic memory corpus for latency benchmarks, built from real persona statements.

Random tokens would make both legs unrealistic: a tsvector of nonsense words matches nothing, and
random vectors spread evenly over the sphere, which HNSW finds much easier than clustered sentence
embeddings. So memories are recombined from the 30,876 first-person statements of
`persona-sentences` (one to three per memory, with names, places, years and numbers varied), and
queries are questions made from statements that were held out of the corpus: they resemble many
memories without copying any one of them, like a real agent's question.

Everything is seeded: the same arguments give the same memories in the same order, which is what
lets an interrupted load resume and a kept database be reused.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

NAMES = (
    "Priya", "Mateo", "Aisha", "Liam", "Sofia", "Kenji", "Amara", "Noah", "Elena", "Tariq", "Grace",
    "Diego", "Hana", "Oscar", "Leila", "Jonas", "Mei", "Samuel", "Zara", "Felix", "Ingrid", "Omar",
    "Chloe", "Ravi", "Nadia", "Lucas", "Yuki", "Ethan", "Freya", "Marco", "Ana", "Theo",
)  # fmt: skip
CITIES = (
    "Lisbon", "Denver", "Osaka", "Nairobi", "Toronto", "Austin", "Krakow", "Lyon", "Seattle",
    "Melbourne", "Bogota", "Dublin", "Pune", "Oslo", "Atlanta", "Glasgow", "Boise", "Tucson",
)  # fmt: skip
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
CATEGORIES = ("preference", "fact", "event", "relationship", "habit")

# Topic tags from keywords, so tag filters have the uneven selectivity real tags have.
TOPICS: dict[str, tuple[str, ...]] = {
    "pets": ("dog", "dogs", "cat", "cats", "puppy", "pet", "pets", "horse", "fish"),
    "food": ("eat", "food", "cook", "cooking", "pizza", "vegan", "vegetarian", "bake", "coffee"),
    "music": ("music", "song", "songs", "band", "guitar", "piano", "sing", "concert", "rap"),
    "family": ("mom", "dad", "mother", "father", "sister", "brother", "kids", "son", "daughter", "wife"),
    "work": ("work", "job", "boss", "office", "career", "nurse", "teacher", "engineer", "manager"),
    "sports": ("soccer", "football", "basketball", "baseball", "run", "running", "gym", "swim", "hike"),
    "travel": ("travel", "trip", "visit", "vacation", "beach", "fly", "europe", "country"),
    "school": ("school", "college", "university", "study", "student", "degree", "class"),
    "health": ("sick", "doctor", "hospital", "diabetes", "allergic", "health", "diet", "weight"),
    "books": ("book", "books", "read", "reading", "novel", "author", "write", "writing"),
}

_RELATION = re.compile(
    r"\b([Mm]y (?:best friend|friend|wife|husband|son|daughter|sister|brother|mom|mother|dad|father|"
    r"girlfriend|boyfriend|partner|fiance|dog|cat|boss|uncle|aunt|cousin|neighbor|roommate))\b(?! [A-Z])"
)
_SMALL_NUMBER = re.compile(r"\b([2-9]|1[0-9])\b")
_WORD = re.compile(r"[A-Za-z']+")
_SECOND_PERSON = {
    "i": "you", "i'm": "you're", "i've": "you've", "i'd": "you'd", "i'll": "you'll", "me": "you",
    "my": "your", "mine": "yours", "myself": "yourself", "am": "are", "was": "were",
}  # fmt: skip
_AUXILIARIES = {
    "am": "Are",
    "was": "Were",
    "can": "Can",
    "will": "Will",
    "would": "Would",
    "should": "Should",
}


@dataclass(frozen=True, slots=True)
class SyntheticMemory:
    content: str
    namespace: str
    category: str
    tags: list[str]
    importance: float


@dataclass(frozen=True, slots=True)
class PersonaPool:
    """Statements split once into those memories are built from and those only queries use."""

    corpus: list[str]
    held_out: list[str]


def clean_sentence(line: str) -> str:
    """Strip the stray leading punctuation a few source lines carry (`! am vegan.`, `" I like`)."""
    text = line.strip().lstrip("!\"':;,.- ").strip()
    if text.startswith("am "):
        text = "I " + text
    return text


def load_pool(path: Path, held_out: int = 4000, seed: int = 7) -> PersonaPool:
    """Split the statements; a small file keeps at least seven eighths for the corpus."""
    lines = path.read_text(encoding="utf-8").splitlines()
    sentences = sorted({s for s in (clean_sentence(line) for line in lines) if len(s) >= 8})
    random.Random(seed).shuffle(sentences)
    held = min(held_out, len(sentences) // 8)
    return PersonaPool(corpus=sentences[held:], held_out=sentences[:held])


def namespace_names(count: int) -> list[str]:
    """The big namespace first, then the small ones."""
    return ["bench-main", *(f"bench-{i:02d}" for i in range(1, count))]


def namespace_weights(count: int, big_share: float = 0.5) -> list[float]:
    """Half the memories in the big namespace; the rest Zipf-like (1/i), so small scopes exist too."""
    if count == 1:
        return [1.0]
    harmonic = [1.0 / i for i in range(1, count)]
    total = sum(harmonic)
    return [big_share, *((1 - big_share) * h / total for h in harmonic)]


def _vary(sentence: str, rng: random.Random) -> str:
    """Give relatives and pets names and change small numbers, as real memories differ in details."""
    text = _RELATION.sub(
        lambda m: f"{m.group(1)} {rng.choice(NAMES)}" if rng.random() < 0.6 else m.group(1), sentence
    )
    if rng.random() < 0.5:
        text = _SMALL_NUMBER.sub(lambda _m: str(rng.randint(2, 19)), text)
    return text


def _detail(rng: random.Random) -> tuple[str, str]:
    """An optional lead-in or trailing note (where, when, who told whom)."""
    roll = rng.random()
    if roll < 0.12:
        return f"Back in {rng.randint(1998, 2024)}: ", ""
    if roll < 0.22:
        return f"Since moving to {rng.choice(CITIES)}: ", ""
    if roll < 0.32:
        return "", f" Mentioned to {rng.choice(NAMES)} on {rng.choice(WEEKDAYS)}."
    if roll < 0.40:
        return "", f" ({rng.choice(CITIES)}, {rng.randint(2010, 2025)})"
    return "", ""


def topic_tags(content: str) -> list[str]:
    words = {w.lower() for w in _WORD.findall(content)}
    return sorted(tag for tag, keys in TOPICS.items() if words.intersection(keys))


def _one_memory(pool: Sequence[str], rng: random.Random) -> str:
    parts = rng.choices((1, 2, 3), weights=(0.35, 0.45, 0.20))[0]
    sentences = [_vary(rng.choice(pool), rng) for _ in range(parts)]
    sentences = [s if s[-1] in ".!?" else s + "." for s in sentences]
    lead, tail = _detail(rng)
    return f"{lead}{' '.join(sentences)}{tail}"


def generate_memories(
    pool: PersonaPool, count: int, namespaces: int, seed: int = 11
) -> Iterator[SyntheticMemory]:
    """`count` memories with unique contents, deterministic for (pool, count, namespaces, seed)."""
    rng = random.Random(seed)
    names = namespace_names(namespaces)
    weights = namespace_weights(namespaces)
    seen: set[str] = set()
    for _ in range(count):
        content = _one_memory(pool.corpus, rng)
        while content in seen:
            content = _one_memory(pool.corpus, rng)
        seen.add(content)
        yield SyntheticMemory(
            content=content,
            namespace=rng.choices(names, weights=weights)[0],
            category=rng.choice(CATEGORIES),
            tags=topic_tags(content),
            importance=round(rng.uniform(0.1, 1.0), 2),
        )


def _second_person(text: str) -> str:
    def swap(match: re.Match[str]) -> str:
        word = match.group(0)
        swapped = _SECOND_PERSON.get(word.lower())
        return word if swapped is None else swapped

    return _WORD.sub(swap, text)


def to_question(sentence: str, variant: int) -> str:
    """A question an agent might ask about the user, made from one first-person statement."""
    body = sentence.rstrip(".!? ")
    words = body.split()
    first, rest = (words[0], words[1:]) if words else ("", [])
    if variant % 3 == 1:
        tail = " ".join(_second_person(body).split()[-5:])
        return f"What did I tell you about {tail}?"
    if variant % 3 == 2:
        return f"Do you remember anything like this: {_second_person(body).lower()}?"
    if first == "I" and rest:
        verb, after = rest[0], _second_person(" ".join(rest[1:]))
        if verb.lower() in _AUXILIARIES:
            return f"{_AUXILIARIES[verb.lower()]} you {after}?".replace("  ", " ")
        if verb.lower() == "have":
            return f"Have you {after}?" if after.startswith("been") else f"Do you have {after}?"
        return f"Do you {verb} {after}?".replace("  ", " ")
    if first in ("I'm", "Im"):
        return f"Are you {_second_person(' '.join(rest))}?"
    if first == "My" and " is " in body:
        subject = body.split(" is ", 1)[0]
        return f"What is {_second_person(subject)}?"
    return f"What about this: {_second_person(body)}?"


def make_queries(pool: PersonaPool, count: int, seed: int = 13) -> list[str]:
    """`count` distinct questions: distinct because the local embedder caches repeated query texts."""
    rng = random.Random(seed)
    sentences = list(pool.held_out)
    rng.shuffle(sentences)
    queries: list[str] = []
    seen: set[str] = set()
    for variant in range(3):
        for sentence in sentences:
            question = to_question(sentence, variant)
            if question not in seen:
                seen.add(question)
                queries.append(question)
                if len(queries) == count:
                    return queries
    raise ValueError(f"only {len(queries)} distinct questions can be made; hold out more statements")
