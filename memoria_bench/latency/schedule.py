"""Which query texts run in which mode, and in what order.

The modes alternate over the same texts, so a background load that comes and goes (the machine may
be shared) hits all alike and the ratios to lexical-only stay fair. No request that embeds its query
repeats a text an earlier one used: the server caches query vectors, and a cache hit would hide the
model's cost.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from app.recall.schemas import LegWeights, RecallRequest
from memoria_bench.modes import ALL, LEXICAL, LEXICAL_DENSE, MODE_WEIGHTS

# Every path runs these three: lexical-only is the baseline, `lexical+dense` the fused recall the
# latency targets were set for, `all` the default recall; the difference of the last two is what the
# graph leg costs.
MODES: dict[str, LegWeights | None] = {mode: MODE_WEIGHTS[mode] for mode in (LEXICAL, LEXICAL_DENSE, ALL)}
FUSED_MODES = tuple(mode for mode in MODES if mode != LEXICAL)
BLOCK = 50  # HTTP requests per mode before switching modes (enough to keep 8 in flight)
WARMUP = 20  # untimed texts per mode before each timed series


class QueryFeed:
    """Hands out each question once, so no request repeats a text."""

    def __init__(self, queries: Sequence[str]) -> None:
        self._queries = list(queries)
        self._next = 0

    def take(self, count: int) -> list[str]:
        if self._next + count > len(self._queries):
            raise ValueError("ran out of distinct query texts")
        taken = self._queries[self._next : self._next + count]
        self._next += count
        return taken


def blocks(
    queries: Sequence[str], modes: Sequence[str], size: int = BLOCK
) -> Iterator[tuple[str, list[str]]]:
    """(mode, texts) blocks: every mode over the same `size` texts in turn, then the next ones."""
    for start in range(0, len(queries), size):
        for mode in modes:
            yield mode, list(queries[start : start + size])


def paired_blocks(
    texts_of: Mapping[str, Sequence[str]], size: int = BLOCK
) -> Iterator[tuple[str, list[str]]]:
    """(mode, texts) blocks: each fused mode's texts in blocks, each block first lexical-only, then
    fused; lexical therefore runs every fused mode's texts, and no embedding text repeats."""
    longest = max(len(texts) for texts in texts_of.values())
    for start in range(0, longest, size):
        for mode, texts in texts_of.items():
            block = list(texts[start : start + size])
            if block:
                yield LEXICAL, block
                yield mode, block


def recall_request(text: str, namespace: str | None, mode: str, limit: int = 10) -> RecallRequest:
    """The request the service gets for `text` in `mode`, as the HTTP body decodes to."""
    return RecallRequest(query=text, namespace=namespace, limit=limit, weights=MODES[mode])
