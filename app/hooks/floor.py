"""The relevance floor of the prompt hook: when no recalled memory is close enough to the prompt
to matter, the prompt gets no context at all.

Recall always answers with its best matches, however poor: a namespace about a web shop still
returns five memories for "what is a monad?". Their fused scores cannot tell: RRF scores depend on
ranks alone, so the best hit of an unrelated prompt scores as high as the best hit of a good one.
The floor therefore reads the absolute signals a hit carries (`RecallHit.explain`, which the hook
asks for):

- the dense leg's cosine distance: its similarity (1 - distance) says how close the memory's
  meaning is to the prompt's, whatever else the namespace holds;
- the lexical leg's score, where the lexical leg found the hit: a prompt sharing rare words with a
  memory (a name, an error code, a table) can be about it even when its embedding is not close.

The answer clears the floor when one hit clears either bar; then its curated memories are injected
as recall ranked them (for those the floor decides whether the prompt gets context, not which
memories). A captured episode must clear the floor itself (`without_far_episodes`): the floor is
the similarity below which a prompt is unrelated to what the namespace holds, and an episode (raw
conversation, nobody stored it on purpose) no closer to the prompt than that is as unrelated to it.
Let through with the answer, such episodes are most of what a prompt gets that it did not ask for
("run the tests" and its reply, tagging along with a question about the staging database).

The lexical bar is off by default: on the dev benchmarks, unrelated prompts share words with
memories far more often than their meanings are close. When the dense leg did not run (the query
could not be embedded) no hit has a similarity: the floor then judges by the lexical bar if set,
and lets the answer through if not, episodes included (recall degraded is no reason to withhold
what it found).

Only the hook path applies it: REST `/v1/recall` and MCP answer what was asked, with the same
signals in `explain`. `memoria bench quality --floor` calibrates the bars (`memoria_bench.floor`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.hooks.settings import HookSettings
from app.recall.schemas import RecallHit

SIMILARITY_OFF = -1.0
"""`min_similarity` at this value (the lowest similarity there is) turns the dense bar off."""


@dataclass(frozen=True, slots=True)
class RelevanceFloor:
    """The two bars; a bar of 0 or less lets every hit the leg found clear it, None turns it off."""

    min_similarity: float | None
    min_lexical_score: float | None

    @property
    def enabled(self) -> bool:
        """Whether either bar is set (else every answer clears, and recall need not explain)."""
        return self.min_similarity is not None or self.min_lexical_score is not None

    def hit_clears(self, hit: RecallHit) -> bool:
        """Whether `hit` is close enough to the prompt by either signal."""
        signals = hit.explain
        if signals is None:  # no signals to judge by: recall was not asked for them
            return True
        if (
            self.min_similarity is not None
            and signals.dense_distance is not None
            and similarity(signals.dense_distance) >= self.min_similarity
        ):
            return True
        return (
            self.min_lexical_score is not None
            and signals.lexical_score is not None
            and signals.lexical_score >= self.min_lexical_score
        )

    def judges(self, answer: Sequence[RecallHit]) -> bool:
        """Whether the floor can judge `answer` (all of recall's hits): a bar is set, and the dense
        leg ran (some hit has a similarity) or the lexical bar is set."""
        if not self.enabled:
            return False
        dense_ran = any(hit.explain is not None and hit.explain.dense_distance is not None for hit in answer)
        return dense_ran or self.min_lexical_score is not None

    def clears(self, hits: Sequence[RecallHit]) -> bool:
        """Whether any of `hits` clears the floor: the prompt then gets context."""
        return not self.judges(hits) or any(self.hit_clears(hit) for hit in hits)

    def without_far_episodes(self, hits: Sequence[RecallHit], answer: Sequence[RecallHit]) -> list[RecallHit]:
        """`hits` without the episodes that do not clear the floor themselves; curated memories stay
        (they come with an answer that clears it). `answer` is all of recall's hits, which tell
        whether the floor can judge at all: when it cannot (off, or no dense leg and no lexical
        bar), every episode stays. An episode the dense leg did not reach has no similarity and
        stays only by the lexical bar."""
        if not self.judges(answer):
            return list(hits)
        return [hit for hit in hits if hit.kind != "episode" or self.hit_clears(hit)]


def relevance_floor(settings: HookSettings) -> RelevanceFloor:
    """The floor the settings describe (`min_similarity` of -1: no dense bar)."""
    dense = None if settings.min_similarity <= SIMILARITY_OFF else settings.min_similarity
    return RelevanceFloor(dense, settings.min_lexical_score)


def similarity(dense_distance: float) -> float:
    """The cosine similarity a dense distance (pgvector's `<=>`, 1 - cosine) stands for."""
    return 1.0 - dense_distance
