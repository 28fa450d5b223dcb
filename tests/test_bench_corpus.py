"""The latency benchmark's corpus: unique, reproducible memories and distinct, held-out questions."""

from __future__ import annotations

from collections import Counter
from itertools import product
from pathlib import Path

import pytest

from memoria_bench.corpus import (
    PersonaPool,
    clean_sentence,
    generate_memories,
    load_pool,
    make_queries,
    namespace_names,
    to_question,
    topic_tags,
)

THINGS = ["dogs", "jazz", "pizza", "hiking", "chess", "tea", "paint", "cats", "soccer", "novels"]
PEOPLE = ["mom", "dad", "sister", "brother", "wife", "friend"]


def write_sentences(path: Path) -> Path:
    """A persona-like file: first-person statements with relatives, numbers and favourites."""
    lines = [f"I like {a} and {b}." for a, b in product(THINGS, THINGS) if a != b]
    lines += [f"My {p} has {n} {t}." for p, n, t in product(PEOPLE, range(2, 6), THINGS)]
    lines += [f"My {p} likes {a} but not {b}." for p, a, b in product(PEOPLE, THINGS, THINGS) if a != b]
    lines += [f"My favorite thing is {t}." for t in THINGS] + ["! am vegan.", '" I like to scuba dive.']
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def pool(tmp_path: Path) -> PersonaPool:
    return load_pool(write_sentences(tmp_path / "sentences.txt"))


def test_held_out_statements_never_reach_the_corpus(pool: PersonaPool) -> None:
    assert pool.held_out and pool.corpus
    assert not set(pool.held_out) & set(pool.corpus)
    assert len(pool.held_out) <= len(pool.corpus) // 7


def test_memories_are_unique_and_the_same_on_every_run(pool: PersonaPool) -> None:
    first = list(generate_memories(pool, 2000, namespaces=10))
    again = list(generate_memories(pool, 2000, namespaces=10))
    assert first == again
    assert len({m.content for m in first}) == 2000


def test_half_the_memories_go_to_the_big_namespace_and_every_namespace_gets_some(pool: PersonaPool) -> None:
    counts = Counter(m.namespace for m in generate_memories(pool, 4000, namespaces=10))
    assert set(counts) == set(namespace_names(10))
    assert 0.45 < counts["bench-main"] / 4000 < 0.55
    assert min(counts.values()) < 0.05 * 4000  # a small scope exists for the filtered figures


def test_memories_combine_statements_and_carry_realistic_fields(pool: PersonaPool) -> None:
    memories = list(generate_memories(pool, 500, namespaces=3))
    statements = Counter(min(m.content.count("."), 3) for m in memories)
    assert statements[1] and statements[2] and statements[3]
    assert all(0.1 <= m.importance <= 1.0 and m.category for m in memories)
    assert any(m.tags for m in memories)


def test_queries_are_distinct_questions(pool: PersonaPool) -> None:
    queries = make_queries(pool, 2 * len(pool.held_out))
    assert len(set(queries)) == len(queries)
    assert all(q.endswith("?") for q in queries)


def test_asking_for_more_queries_than_can_be_made_fails_loudly(pool: PersonaPool) -> None:
    with pytest.raises(ValueError, match="distinct questions"):
        make_queries(pool, 3 * len(pool.held_out) + 1)


@pytest.mark.parametrize(
    ("statement", "question"),
    [
        ("I have two dogs.", "Do you have two dogs?"),
        ("I have been to Japan.", "Have you been to Japan?"),
        ("I am a nurse.", "Are you a nurse?"),
        ("I like my job.", "Do you like your job?"),
        ("My favorite color is blue.", "What is your favorite color?"),
        ("Jazz is my thing.", "What about this: Jazz is your thing?"),
    ],
)
def test_first_person_statements_become_questions(statement: str, question: str) -> None:
    assert to_question(statement, 0) == question


def test_question_variants_differ_for_one_statement() -> None:
    assert len({to_question("I like to scuba dive.", v) for v in range(3)}) == 3


def test_stray_leading_punctuation_is_cleaned() -> None:
    assert clean_sentence("! am vegan.") == "I am vegan."
    assert clean_sentence('" I like to scuba dive.') == "I like to scuba dive."


def test_topic_tags_come_from_keywords() -> None:
    assert topic_tags("My dog eats pizza at work.") == ["food", "pets", "work"]
    assert topic_tags("Nothing here.") == []
