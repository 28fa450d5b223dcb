"""What one `memoria bench inference` run measures."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memoria_bench.latency.options import DEFAULT_SENTENCES

#: Made-up words of one shape (nine letters, no stem an English stemmer would cut differently), so
#: the three queries differ only in whether another tenant's memories hold their word.
WORD = "zyphorane"
ABSENT = "quorbelin"
CONTROL = "vextramid"


@dataclass(frozen=True, slots=True)
class InferenceOptions:
    others_memories: int = 5_000  # user B's memories, every one holding WORD
    own_memories: int = 200  # user A's corpus, without any of the three words
    rounds: int = 200  # timed rounds; each recalls the three queries once, in a shuffled order
    warmup_rounds: int = 10  # untimed first (query embeddings cached, pages in memory)
    id_trials: tuple[int, ...] = (3, 8, 25)  # memories B stores between A's two stores, per trial
    sentences: Path = DEFAULT_SENTENCES
    seed: int = 16
    permutations: int = 2_000  # for the p-value when scipy is not installed
