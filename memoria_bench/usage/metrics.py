"""What the replay's injected contexts are worth, judged by the scenario's labels.

An injected context is split into items (`context_items`: one per `- #<id> …` line, with any
indented lines under it), and each item is matched to the fact versions whose `key` it contains
(`matches`). From there, per scenario:

Questions are asked in *question sessions* (sessions with an `asks` or `unrelated` turn); what
reaches the model there is what the scenario can judge, so stale items, noise and context size
are counted over those sessions' hook calls. Repeats are counted in every session.

- **answers injected**: questions (`asks`) whose expected version's key is in an item the session
  was given by the time of the question (its SessionStart contexts and its prompts' contexts, up to
  and including the question's);
- **stale unmarked**: items holding an older version of a fact whose newer version had been said
  by then, without the newer one, and not marked as superseded (`is_marked`); also counted per
  question about a changed fact;
- **noise**: items that match no labelled fact version, as a share of all items injected;
- **context characters per prompt**: each prompt's context plus the SessionStart context that came
  just before it (it reaches the model with that prompt), median and p90 over the question
  sessions' prompts (and, as `…_all`, over every prompt of the scenario);
- **unrelated left alone**: `unrelated` prompts whose UserPromptSubmit hook injected nothing;
- **repeats**: items injected into a session that already got the same memory (same id, or same
  text) from an earlier hook call of that session, resumes and compactions included.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from memoria_bench.usage.replay import HookCall
from memoria_bench.usage.scenario import FactVersion, Scenario, normalised

_ITEM = re.compile(r"\s*[-*]\s+#(\d+)\b\s*(.*)")
_TAG = re.compile(r"^\[[^\]]*\]\s*")
#: The text that marks a line as a superseded memory's (see `is_marked`).
SUPERSEDED_MARKER = "superseded"


@dataclass(frozen=True, slots=True)
class Item:
    """One memory as injected: its id and its text (the line and any indented lines under it)."""

    memory_id: int
    text: str

    @property
    def content(self) -> str:
        """The text after the `[category]` / `[episode …]` tag, normalised: what "the same text" compares."""
        return normalised(_TAG.sub("", self.text.strip()))


def is_marked(item: Item) -> bool:
    """Whether the item is shown as superseded (an old version the reader is told is old)."""
    return SUPERSEDED_MARKER in item.text.lower()


def context_items(context: str) -> list[Item]:
    """The memories in an injected context, in order; header and section lines are not items."""
    items: list[Item] = []
    for line in context.splitlines():
        found = _ITEM.match(line)
        if found:
            items.append(Item(int(found[1]), found[2]))
        elif items and line[:1].isspace() and line.strip():
            last = items[-1]
            items[-1] = Item(last.memory_id, f"{last.text}\n{line.strip()}")
    return items


def matches(text: str, versions: Iterable[FactVersion]) -> list[FactVersion]:
    """The fact versions whose key is in `text` (case and whitespace aside)."""
    said = normalised(text)
    return [version for version in versions if normalised(version.key) in said]


def is_stale(found: Sequence[FactVersion], said: dict[str, int]) -> bool:
    """An item holding an older version of a fact whose newer version was said, and not the newer one."""
    newest = {version.fact for version in found if version.version == said.get(version.fact)}
    return any(v.version < said.get(v.fact, 0) and v.fact not in newest for v in found)


def percentile(values: Sequence[int], q: float) -> float:
    return round(float(np.percentile(values, q)), 1) if values else 0.0


def prompt_chars(calls: Sequence[HookCall]) -> list[int]:
    """Per prompt: its context plus the SessionStart contexts since the session's previous prompt."""
    sizes: list[int] = []
    waiting: dict[str, int] = {}
    for call in calls:
        if call.event == "SessionStart":
            waiting[call.session_id] = waiting.get(call.session_id, 0) + len(call.context)
        else:
            sizes.append(len(call.context) + waiting.pop(call.session_id, 0))
    return sizes


def _tally(counts: dict[str, int], call: HookCall, item: Item) -> None:
    """Count `item` under `<event>:<episode|memory>`."""
    kind = "episode" if item.text.lstrip().startswith("[episode") else "memory"
    name = f"{call.event}:{kind}"
    counts[name] = counts.get(name, 0) + 1


def question_sessions(scenario: Scenario) -> frozenset[str]:
    """The sessions that ask or hold an unrelated prompt (a resumed one counts as its own)."""
    return frozenset(
        session.id for session in scenario.sessions if any(t.asks or t.unrelated for t in session.turns)
    )


def measured_calls(scenario: Scenario, calls: Sequence[HookCall]) -> list[HookCall]:
    """The calls of the question sessions."""
    asking = question_sessions(scenario)
    return [call for call in calls if call.session in asking]


def measure(scenario: Scenario, calls: Sequence[HookCall]) -> dict[str, object]:
    """The figures of one replayed scenario (the module docstring says what each counts)."""
    versions = scenario.versions()
    asking = question_sessions(scenario)
    seen_ids: dict[str, set[int]] = {}
    seen_texts: dict[str, set[str]] = {}
    given: dict[str, list[list[FactVersion]]] = {}
    stale_given: dict[str, set[str]] = {}
    items_total = noise = stale = repeats = 0
    # where the stale and noise items came from: which hook, and whether curated or an episode
    origins: dict[str, dict[str, int]] = {"stale": {}, "noise": {}}
    answered: list[str] = []
    missed: list[str] = []
    changed_questions = stale_questions = 0
    unrelated = left_alone = 0
    for call in calls:
        session_ids = seen_ids.setdefault(call.session_id, set())
        session_texts = seen_texts.setdefault(call.session_id, set())
        measured = call.session in asking
        for item in context_items(call.context):
            if item.memory_id in session_ids or item.content in session_texts:
                repeats += 1
            session_ids.add(item.memory_id)
            session_texts.add(item.content)
            found = matches(item.text, versions)
            given.setdefault(call.session_id, []).append(found)
            if not measured:
                continue
            items_total += 1
            if not found:
                noise += 1
                _tally(origins["noise"], call, item)
            elif is_stale(found, call.said) and not is_marked(item):
                stale += 1
                _tally(origins["stale"], call, item)
                stale_given.setdefault(call.session_id, set()).update(v.fact for v in found)
        if call.unrelated:
            unrelated += 1
            left_alone += not call.context
        if call.asks is not None:
            expected = call.asks
            hit = any(expected in found for found in given.get(call.session_id, []))
            (answered if hit else missed).append(f"{call.session}: {expected.label}")
            if expected.version > 1:
                changed_questions += 1
                stale_questions += expected.fact in stale_given.get(call.session_id, set())
    sizes = prompt_chars(measured_calls(scenario, calls))
    every_size = prompt_chars(calls)
    return {
        "sessions": len(scenario.sessions),
        "question_sessions": len(asking),
        "prompts": len(every_size),
        "measured_prompts": len(sizes),
        "questions": scenario.questions,
        "answers_injected": len(answered),
        "stale_unmarked": stale,
        "questions_on_changed_facts": changed_questions,
        "changed_questions_with_stale_unmarked": stale_questions,
        "items_injected": items_total,
        "noise_items": noise,
        "noise_share": round(noise / items_total, 3) if items_total else 0.0,
        "stale_unmarked_from": origins["stale"],
        "noise_from": origins["noise"],
        "context_chars_median": percentile(sizes, 50),
        "context_chars_p90": percentile(sizes, 90),
        "prompts_with_context": sum(size > 0 for size in sizes),
        "context_chars_median_all": percentile(every_size, 50),
        "context_chars_p90_all": percentile(every_size, 90),
        "unrelated_prompts": unrelated,
        "unrelated_left_alone": left_alone,
        "repeats": repeats,
        "missed": missed,
    }
