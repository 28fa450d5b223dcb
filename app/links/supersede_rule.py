"""Does a new memory replace an older one? A deterministic rule, no database, no model call.

A memory that restates an older one of its namespace with different specifics ("the staging
database now runs in eu-central-1" after "... runs in eu-west-1") makes the older one stale: recall
should answer the new one only. The store asks this rule about the few nearest older memories
(`find_supersede`) and acts on its `Verdict`: `confident` links the two (`supersedes`, origin
`auto`, the verdict's reason as the link's reason), `suggest` offers the link to the agent in the
store's answer, `none` does nothing. A wrong automatic link hides a true fact, so precision comes
first: every doubt lowers the decision, never raises it.

What the rule reads, beside the cosine similarity of the two embeddings:

- **Words and their weight.** Both texts are cut into tokens that keep technical values whole
  (`eu-west-1`, `3.12`, `localhost:5173`, `#incidents`); words are stemmed (Snowball), so "moved"
  and "move" are one. A word weighs what its rarity says (wordfreq's Zipf frequency): "the", "is",
  "we" weigh nothing, "database" a little, "Dramatiq" a lot. A token holding a digit, a rare word,
  or a word capitalised inside a sentence (a name), is a *specific*: the kind of thing a fact's
  value is.
- **Same subject.** The share of the old memory's weight the new one keeps, and the embedding
  similarity, must both be high.
- **Different specifics.** Some specific of the old memory is gone from the new one AND the new one
  brings a specific the old did not have. A paraphrase keeps every specific (a duplicate, not a
  change); an elaboration or an addition keeps them all and adds some (nothing is gone).
- **One slot changed.** Aligning the two token sequences, the old specifics that are gone sit in
  one stretch, replaced there by the new ones. Two stretches changed means the subject changed
  too ("staging ... eu-west-1" vs "production ... us-east-1"): at most a suggestion, unless the
  new text says it is a change (below). So does a stretch followed by more of the kept text than
  precedes it: what changed is what the sentence is about ("Server web-1 is in eu-west-1" and
  "Server web-2 ..."), not the value said of it, which comes last.
- **Labels are no values.** A small number right after a lower-case noun ("step 2", "memory 3")
  numbers one of several things that hold together: part of the subject, not a specific.
- **Cues.** Words that announce a change ("moved", "now", "switched", "instead", "no longer",
  "renamed", "upgraded", "migrated"...) raise the decision; words that announce an addition
  ("also", "as well", "in addition", "too") cap it at none: an added fact sits beside the old one.
  These are phrases of English, not of any library's vocabulary, so they are listed here.
- **Never.** A question neither replaces nor is replaced; nor does a memory replace a newer one;
  nor one of another category. More than two changed stretches is another statement, not the
  same one restated: not even suggested.
- **Episodes** are read without their questions (an exchange's question asks, its statements say
  what holds) and without the `User:`/`Assistant:` labels and tool digest. An exchange says
  several things: when the two whole texts are not a confident call, each statement of one is
  judged against each statement of the other, and the best verdict counts.
- **A change said in one clause.** When the texts, aligned whole, are no confident call, one
  clause of the new text may still say outright that the old value changed: it names the old
  value as gone ("moved from Timescale to ClickHouse") or gives the same slot a new value ("devices
  now report every 10 seconds"). `app.links.supersede_named` reads those two shapes.
- **Episodes** (captured exchanges) may replace episodes, and curated memories may replace them. An
  episode, said in passing, never replaces a curated memory, stored on purpose, by itself: at most
  it is suggested.

The rule was also run over conversation corpora (LoCoMo's facts and chat turns), where a memory
rarely replaces another: what it called there shaped the cues (only strong ones) and the names (a
sentence's first word is none).

The thresholds live in `Thresholds` (the bench `memoria bench supersede` measures them on a
labelled dev set; `Thresholds()` holds the values it chose).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from difflib import SequenceMatcher
from itertools import pairwise
from typing import Literal

from app.core.english import zipf
from app.links.supersede_named import QUALIFIER_ZIPF, is_cue_word, named_change, qualified
from app.links.supersede_text import (
    ADDITION_CUES,
    CHANGE_CUES,
    PAST_CUES,
    RETIRED_CUES,
    Token,
    fact_text,
    find_cue,
    is_question,
    statements,
    tokens,
)

Decision = Literal["confident", "suggest", "none"]


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The rule's numbers, chosen on the dev set of `memoria bench supersede` (never on held-out
    pairs)."""

    confident_similarity: float = 0.60
    """Cosine similarity of the two embeddings a confident call needs at least."""
    cued_similarity: float = 0.45
    """... when the new text announces a change (a cue)."""
    suggest_similarity: float = 0.60
    """... that a suggestion needs at least (a cued one: `cued_similarity`)."""
    kept_weight: float = 0.6
    """Share of the old memory's subject (its words but the changed specifics) the new one keeps."""
    statement_shared: int = 2
    """Words two statements of two exchanges must share to be judged as one subject restated."""
    cued_spans: int = 2
    """Changed stretches a cued change may have (an uncued confident one has exactly one)."""
    named_similarity: float = 0.35
    """Cosine similarity a change that names the old value as gone needs (`supersede_named`): the
    name itself ties the two memories, their other words may differ."""
    common_zipf: float = 6.0
    """Words at least this frequent (Zipf scale) weigh nothing: "the", "is", "we", "now"."""
    label_zipf: float = 5.7
    """A lower-case word rarer than this before a small number makes it a label ("step 2"); the
    common words before a value ("is 4", "at 3", "every 15") are more frequent."""
    specific_zipf: float = 4.0
    """Words rarer than this are specifics (a technology, a place, a name) even uncapitalised."""


DEFAULT_THRESHOLDS = Thresholds()


@dataclass(frozen=True, slots=True)
class Side:
    """One memory as the rule reads it."""

    text: str
    created_at: datetime
    kind: str = "memory"
    """`memory` (curated) or `episode` (captured)."""
    category: str | None = None
    tags: Sequence[str] = ()


@dataclass(frozen=True, slots=True)
class Verdict:
    """The decision, the sentence that explains it (a link's reason), and the evidence it read."""

    decision: Decision
    reason: str
    similarity: float
    kept: float = 0.0
    """Share of the old memory's word weight the new one keeps."""
    removed: tuple[str, ...] = ()
    """The old memory's specifics the new one no longer has."""
    added: tuple[str, ...] = ()
    """The new memory's specifics the old one did not have."""
    changed_spans: int = 0
    """Stretches of the aligned texts where specifics changed."""
    cue: str | None = None
    """The change cue the new text holds, if any."""
    shared: int = 0
    """Words (stems) and values the two texts have in common."""
    blocked_by: str | None = field(default=None)
    """Why the decision is `none` or was lowered (a rule's name), when it was."""


def judge(new: Side, old: Side, similarity: float, thresholds: Thresholds = DEFAULT_THRESHOLDS) -> Verdict:
    """Whether `new` replaces `old` (see the module's notes), given their embeddings' cosine similarity."""
    t = thresholds
    if new.created_at <= old.created_at:
        return Verdict("none", "the other memory is not older", similarity, blocked_by="not_newer")
    if is_question(new.text) or is_question(old.text):
        return Verdict("none", "a question states no fact", similarity, blocked_by="question")
    if new.category and old.category and new.category != old.category:
        return Verdict("none", "different categories", similarity, blocked_by="category")
    new_text, old_text = fact_text(new.text, new.kind), fact_text(old.text, old.kind)
    verdict = _judge_texts(new_text, old_text, new, old, similarity, t)
    if verdict.decision == "confident":
        return verdict
    if "episode" in (new.kind, old.kind):
        verdict = _best_statement(verdict, new_text, old_text, new, old, similarity, t)
        if verdict.decision == "confident":
            return verdict
    return _named(verdict, new_text, old_text, new, old, similarity, t)


def _named(
    verdict: Verdict, new_text: str, old_text: str, new: Side, old: Side, similarity: float, t: Thresholds
) -> Verdict:
    """The restatement rule's verdict, raised to confident when one clause of the new memory says
    the old one's value changed (`supersede_named`), under the gates every link obeys."""
    if similarity < min(t.named_similarity, t.cued_similarity):  # below both bars: no need to read
        return verdict
    change = named_change(new_text, old_text, t)
    if change is None:
        return verdict
    bar = t.named_similarity if change.how == "named-gone" else t.cued_similarity
    if similarity < bar:
        return verdict
    added = (change.new_value,) if change.new_value else ()
    named = replace(
        verdict,
        decision="confident",
        reason=change.reason(similarity),
        removed=(change.old_value,),
        added=added,
        cue=change.cue,
        blocked_by=None,
    )
    return _gated(named, new, old)


def _gated(verdict: Verdict, new: Side, old: Side) -> Verdict:
    """A confident verdict lowered to a suggestion where an automatic link must not go alone: an
    episode replacing a curated memory, or two memories tagged apart."""
    if new.kind == "episode" and old.kind != "episode":
        return replace(verdict, decision="suggest", blocked_by="episode_over_memory")
    if new.tags and old.tags and not set(new.tags) & set(old.tags):
        return replace(verdict, decision="suggest", blocked_by="tags")
    return verdict


def _best_statement(
    verdict: Verdict, new_text: str, old_text: str, new: Side, old: Side, similarity: float, t: Thresholds
) -> Verdict:
    """The best verdict of any statement of one exchange against any of the other's."""
    # an exchange says several things: one of its statements may restate one of the other's
    # (two statements that share a few words only are no evidence of one subject)
    rank = {"confident": 0, "suggest": 1, "none": 2}
    best = (rank[verdict.decision], 0)
    for new_sentence in statements(new_text):
        for old_sentence in statements(old_text):
            found = _judge_texts(new_sentence, old_sentence, new, old, similarity, t)
            score = (rank[found.decision], -found.shared)
            if found.shared >= t.statement_shared and score < best:
                verdict, best = found, score
    return verdict


def _judge_texts(
    new_text: str, old_text: str, new: Side, old: Side, similarity: float, t: Thresholds
) -> Verdict:
    """The rule on two texts (two memories, or a statement of each of two exchanges)."""
    cue = find_cue(new_text, CHANGE_CUES)
    new_tokens, old_tokens = tokens(new_text, t), tokens(old_text, t)
    new_set = {k.text for k in new_tokens}
    old_set = {k.text for k in old_tokens}
    retired = cue is not None and find_cue(new_text, RETIRED_CUES) is not None
    gone = [k for k in old_tokens if k.specific and (k.text not in new_set or retired)]
    removed = _shown(gone)
    added = _shown(k for k in new_tokens if k.specific and k.text not in old_set)
    old_weights = _unique_weights(old_tokens)
    value = {k.text for k in gone}
    subject = {text: w for text, w in old_weights.items() if text not in value}
    subject_weight = sum(subject.values())
    kept = (
        sum(w for text, w in subject.items() if text in new_set) / subject_weight if subject_weight else 0.0
    )
    aligned = _align(old_tokens, new_tokens)
    spans = aligned.spans
    evidence = Verdict("none", "", similarity, kept, removed, added, spans, cue, len(new_set & old_set))

    def verdict(decision: Decision, reason: str, blocked_by: str | None = None) -> Verdict:
        return replace(evidence, decision=decision, reason=reason, blocked_by=blocked_by)

    addition = find_cue(new_text, ADDITION_CUES)
    if addition is not None:
        return verdict("none", f"the new memory adds a fact (\u201c{addition}\u201d)", "addition")
    if not removed:
        return verdict("none", "the new memory keeps every specific of the old one", "nothing_removed")
    if not added:
        return verdict("none", "the new memory brings no new specific", "nothing_added")
    floor = t.cued_similarity if cue is not None else t.suggest_similarity
    if similarity < floor or kept < t.kept_weight:
        return verdict("none", "not the same subject", "subject")
    reason = _reason(removed, added, similarity, kept, cue)
    if find_cue(new_text, PAST_CUES) is not None:
        return verdict("suggest", reason, "past")
    one_slot = spans == 1 and aligned.clean and not aligned.predicate_kept
    confident = (one_slot and similarity >= t.confident_similarity) or (
        cue is not None and spans <= t.cued_spans and similarity >= t.cued_similarity
    )
    if not confident and spans > t.cued_spans:
        return verdict("none", "too much changed to read as one fact restated", "too_many_changes")
    if not confident:
        held = (
            "similarity"
            if one_slot
            else "what_changed_is_the_subject"
            if aligned.predicate_kept
            else "several_changes"
        )
        return verdict("suggest", reason, held)
    first_added = next((k.at for k in new_tokens if k.specific and k.text not in old_set), None)
    if (first_added is not None and qualified(new_text, first_added, old_set)) or _names_another(
        new_text, new_tokens, old_set
    ):
        # a cued change that names another thing than the old memory's subject ("the *worker job*
        # timeout is now 300 seconds" after "the web request timeout is 30 seconds")
        return verdict("suggest", reason, "qualifier")
    return _gated(verdict("confident", reason), new, old)


def _names_another(text: str, found: Sequence[Token], old_set: set[str]) -> bool:
    """Whether a new word stands right before a word of the old memory's subject, naming which one
    ("the *admin* API allows 20 requests" after "the API allows 100"): another thing of the same
    kind, not the same thing changed."""
    for word, after in pairwise(found):
        between = text[word.at + len(word.shown) : after.at]
        if (
            word.text not in old_set
            and word.shown.isalpha()
            and zipf(word.shown) < QUALIFIER_ZIPF
            and not is_cue_word(word.shown)
            and not between.strip()
            and after.text in old_set
            and after.shown.isalpha()
            and zipf(after.shown) < QUALIFIER_ZIPF
        ):
            return True
    return False


def warm_up() -> None:
    """Load the word frequencies and the stemmer now (a fraction of a second), not in the first
    store's transaction."""
    tokens("Warm up the supersede rule", DEFAULT_THRESHOLDS)


def _unique_weights(found: Sequence[Token]) -> dict[str, float]:
    weights: dict[str, float] = {}
    for k in found:
        weights[k.text] = max(weights.get(k.text, 0.0), k.weight)
    return weights


def _shown(found: object) -> tuple[str, ...]:
    return tuple(dict.fromkeys(k.shown for k in found))  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class _Alignment:
    spans: int
    """Stretches where the old text changed."""
    clean: bool
    """Every stretch a clean swap of values: specifics on both sides, no other word of the subject."""
    old_clean: bool
    """The old side of every stretch holds specifics only (new words may come with the new value)."""
    predicate_kept: bool
    """More of the old text's kept weight comes after the first changed stretch than before it: what
    changed is what the sentence is about ("Server web-1 is in eu-west-1"), not its value."""


def _align(old: Sequence[Token], new: Sequence[Token]) -> _Alignment:
    """Where the two texts differ, aligned token by token. A stretch is words replaced or deleted,
    or words inserted between two kept ones (a qualifier: "the maximum avatar upload size"); words
    only appended or prepended are an addition, not a change."""
    matcher = SequenceMatcher(a=[k.text for k in old], b=[k.text for k in new], autojunk=False)
    ops = matcher.get_opcodes()
    spans = 0
    clean = old_clean = True
    first: tuple[int, int] | None = None
    for at, (op, a0, a1, b0, b1) in enumerate(ops):
        if op in ("replace", "delete") or (op == "insert" and 0 < at < len(ops) - 1):
            spans += 1
            clean = clean and all(k.specific for k in (*old[a0:a1], *new[b0:b1]))
            old_clean = old_clean and all(k.specific for k in old[a0:a1])
            first = first or (a0, a1)
    predicate_kept = False
    if first is not None:
        kept = {k.text for k in new}
        before = sum(k.weight for k in old[: first[0]] if k.text in kept)
        after = sum(k.weight for k in old[first[1] :] if k.text in kept)
        predicate_kept = after > before
    return _Alignment(spans, clean, old_clean, predicate_kept)


def _reason(
    removed: Sequence[str], added: Sequence[str], similarity: float, kept: float, cue: str | None
) -> str:
    said = f"; it says \u201c{cue}\u201d" if cue else ""
    return (
        f"same subject (similarity {similarity:.2f}, {kept:.0%} of its words kept) with different "
        f"specifics: {', '.join(removed)} \u2192 {', '.join(added)}{said}"
    )
