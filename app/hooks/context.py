"""The `additionalContext` text: recalled memories, best first, in as few characters as possible.

Every character lands in the model's context on every prompt, so each memory is one line
(`#id [category] content`, whitespace collapsed) and the whole block stops at a character budget.
A memory that does not fit is skipped rather than cut, so a later, shorter one can still make it;
only the best memory is ever shortened, so a prompt with hits never gets nothing.

Curated memories (stored on purpose) come before episodes (exchanges captured from earlier
sessions), and only episodes that score close to the best hit are offered at all (`pick`; the
route then keeps only those that clear the relevance floor themselves, `app.hooks.floor`): an
episode is raw conversation, useful when it is about this very prompt and noise otherwise. An
episode's line says so and when it happened (`#id [episode 2026-11-20] User: …`), and is cut to a
few hundred characters: a captured exchange can be thousands, and its id fetches the rest. An
episode that holds only a question (asked, never answered) gives way to anything else among the
hits (`without_bare_questions`): the same unanswered question captured in six sessions must not
fill the context ahead of the fact that answers it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.capture.rules import API_ERROR, INTERRUPTED, UNANSWERED, skip_reason
from app.capture.schemas import Digest
from app.recall.schemas import RecallHit

EPISODE_LINE_CHARS = 400
"""Longest episode line: enough to tell what the exchange was about, the id fetches it whole."""


def header(namespace: str) -> str:
    return (
        f"Memories recalled by Memoria from namespace {namespace}, curated first, best first "
        "(saved in earlier sessions; they may be out of date):"
    )


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def memory_line(hit: RecallHit) -> str:
    content = " ".join(hit.content.split())
    if hit.kind == "episode":
        return _clip(f"- #{hit.id} [episode {hit.created_at:%Y-%m-%d}] {content}", EPISODE_LINE_CHARS)
    category = f" [{hit.category}]" if hit.category else ""
    return f"- #{hit.id}{category} {content}"


def pick(hits: Sequence[RecallHit], limit: int, min_score: float, episode_ratio: float) -> list[RecallHit]:
    """The hits to inject, at most `limit`: curated memories scoring `min_score` or more, best first,
    then the episodes that also score at least `episode_ratio` of the best hit's score.

    Recall scores are fused reciprocal ranks (about 0.05-0.3 with the default weights), not
    similarities, so the episode bar is relative: an episode ranked near the top by the same legs
    as the best hit passes (its low importance costs it ~10%), one that only a single leg found far
    down does not."""
    best = max((hit.score for hit in hits), default=0.0)
    curated = [hit for hit in hits if hit.kind != "episode" and hit.score >= min_score]
    bar = max(min_score, episode_ratio * best)
    episodes = [hit for hit in hits if hit.kind == "episode" and hit.score >= bar]
    by_score = sorted(curated, key=lambda hit: -hit.score) + sorted(episodes, key=lambda hit: -hit.score)
    return by_score[:limit]


_QUESTION_START = re.compile(
    r"(what|which|where|when|who|whom|whose|why|how|is|are|was|were|do|does|did|can|could|should|"
    r"would|will|has|have|had)\b",
    re.IGNORECASE,
)
_NO_ANSWER = frozenset({API_ERROR, INTERRUPTED, UNANSWERED})
"""The capture skip rules whose reply answers nothing: the API failed, the person interrupted, or
the assistant said it could not tell."""


def is_question(text: str) -> bool:
    """Whether the person asked (a question mark at the end, or a question's first word)."""
    stripped = text.strip()
    return stripped.endswith("?") or _QUESTION_START.match(stripped) is not None


def question_only(hit: RecallHit) -> bool:
    """An episode that holds a question and no answer to it (`User: …?` with no reply, or a reply
    the capture rules find empty of any answer: an API error, an interruption, "I don't know").
    Captured before those rules skipped such exchanges, or asked again and again, these carry
    nothing but the question, which the prompt itself already asks."""
    if hit.kind != "episode" or not hit.content.startswith("User: "):
        return False
    said, _, rest = hit.content[len("User: ") :].partition("\n\nAssistant: ")
    reply = rest.split("\n\nTools: ", 1)[0].strip()
    if "\n\nTools: " in said:  # no reply, but tools ran: something happened on the way
        return False
    if not is_question(said):
        return False
    return not reply or skip_reason(said.strip(), reply, Digest()) in _NO_ANSWER


def without_bare_questions(hits: Sequence[RecallHit]) -> list[RecallHit]:
    """`hits` without the question-only episodes when anything else is among them: an episode that
    is only a question never takes a slot (or a rank) from its answer, a curated memory or an
    answered exchange. Alone, they are kept: that the question was asked before is all there is."""
    answers = [hit for hit in hits if not question_only(hit)]
    return answers if answers else list(hits)


def render(namespace: str, hits: Sequence[RecallHit], max_chars: int) -> tuple[str, int]:
    """(text, memories included); ("", 0) when nothing fits."""
    text, included = layout(namespace, hits, max_chars)
    return text, len(included)


def within(text: str, max_chars: int, max_bytes: int | None = None) -> bool:
    """Whether `text` keeps to `max_chars` characters and, for a host that counts bytes (Codex
    estimates a token per 4 bytes of UTF-8), to `max_bytes` bytes."""
    return len(text) <= max_chars and (max_bytes is None or len(text.encode("utf-8")) <= max_bytes)


def layout(
    namespace: str, hits: Sequence[RecallHit], max_chars: int, max_bytes: int | None = None
) -> tuple[str, list[RecallHit]]:
    """(text, the hits it includes) within `max_chars` characters (and `max_bytes` bytes, when
    given); ("", []) when nothing fits."""
    text = header(namespace)
    included: list[RecallHit] = []
    for hit in hits:
        line = "\n" + memory_line(hit)
        room = max_chars - len(text)
        if len(line) <= room and within(text + line, max_chars, max_bytes):
            text += line
            included.append(hit)
        elif not included and room > 40:
            cut = _shortened(text, line[: room - 1], max_bytes)
            if cut:
                text += cut
                included.append(hit)
    return (text, included) if included else ("", [])


def _shortened(text: str, line: str, max_bytes: int | None) -> str:
    """`line` cut (with "…") so that `text` plus it keeps to `max_bytes`; "" when too little is left."""
    cut = line + "…"
    while max_bytes is not None and len((text + cut).encode("utf-8")) > max_bytes:
        excess = len((text + cut).encode("utf-8")) - max_bytes
        line = line[: len(line) - max(excess // 4, 1)]  # a character is at most 4 bytes
        if len(line) <= 40:
            return ""
        cut = line + "…"
    return cut
