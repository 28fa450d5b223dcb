"""The SessionStart `additionalContext`: what a new session should know before its first prompt.

Claude Code fires SessionStart with a `source`: `startup` (a new session), `resume` (an old one
continued: its conversation is back in context), `clear` (after /clear: a fresh start in the same
process) and `compact` (the conversation was just summarised). Each gets the namespace's pinned
memories, then its curated memories by importance and recency, and:

- startup: nothing more by default; with `MEMORIA_HOOKS__START_EPISODES` raised, that many of the
  most recent episodes of *other* sessions ("recent sessions"), whatever the new session is about
  (the prompt hook recalls the episodes a prompt is about, which is why they are off by default);
- compact: this session's own most recent episodes, the exchanges the summary squeezed;
- resume: nothing more, in half the budget (the resumed conversation carries the rest);
- clear: nothing more (the person cleared the conversation on purpose).

Curated memories always come first: an episode is raw conversation, a curated memory was kept on
purpose. Everything is read by ONE statement (`START_CONTEXT`), then laid out within a character
budget: a line that does not fit is skipped so that a shorter later one can still make it, and long
memories are cut to a line (the id fetches the whole, `memory_get`). Sensitive memories never appear.

With the session's ledger (`app.memories.ledger`), every source leaves out what this session was
already given and records what it shows, within what is left of the session's context budget
(`MEMORIA_HOOKS__SESSION_MAX_CHARS`, shared with the prompt hook). A resumed session keeps its
conversation, memories included, so it gets nothing again. A compacted one lost the injected text
to a summary: its pinned memories (pinned to be in context always) are given back and shown again,
and their earlier cost leaves its budget; the rest stays given, as the summary keeps its gist and
repeating it all is what the ledger exists to stop. /clear starts a new session id in Claude Code,
so a cleared session gets its memories again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import asyncpg

from app.hooks.context import within
from app.memories.ledger import SessionLedger, with_ledger_fragments
from app.namespaces import resolve_scope

log = logging.getLogger(__name__)

Source = Literal["startup", "resume", "clear", "compact"]
EpisodeMode = Literal["other-sessions", "this-session", "none"]

SECTION_ROWS = 40
"""Most rows each section reads: more lines than any budget up to 9,000 characters shows."""
EPISODE_ROWS = {"compact": 8}
"""Episodes read per source (only startup and compact show any); a startup's number is the hooks'
`start_episodes` setting, which the route passes."""
MEMORY_LINE_CHARS = 500
EPISODE_LINE_CHARS = 300

# Pinned memories (any kind), then curated ones by importance and recency, then the episodes the
# source asks for (this session's, or other sessions'), newest first: one statement, three bounded
# reads of the namespace (each LIMITed; `position` keeps each section's order through the UNION),
# each leaving out what the session's ledger says it has ($6 the user, $7 the session, NULL: no ledger).
START_CONTEXT = """
WITH pinned AS (
    SELECT m.public_id, m.kind, m.category, m.content, m.created_at,
           row_number() OVER (ORDER BY m.importance DESC, m.created_at DESC, m.id DESC) AS position
    FROM memories m
    WHERE m.namespace_id = $1
      AND {{ visible(m, false) }}
      AND {{ current(m, NULL::timestamptz) }}
      AND {{ unseen(m, $6, $7::text) }}
      AND m.pinned
    ORDER BY m.importance DESC, m.created_at DESC, m.id DESC
    LIMIT $4
),
curated AS (
    SELECT m.public_id, m.kind, m.category, m.content, m.created_at,
           row_number() OVER (ORDER BY m.importance DESC, m.created_at DESC, m.id DESC) AS position
    FROM memories m
    WHERE m.namespace_id = $1
      AND {{ visible(m, false) }}
      AND {{ current(m, NULL::timestamptz) }}
      AND {{ unseen(m, $6, $7::text) }}
      AND NOT m.pinned
      AND m.kind = 'memory'
    ORDER BY m.importance DESC, m.created_at DESC, m.id DESC
    LIMIT $4
),
episodes AS (
    SELECT m.public_id, m.kind, m.category, m.content, m.created_at,
           row_number() OVER (ORDER BY m.created_at DESC, m.id DESC) AS position
    FROM memories m
    WHERE m.namespace_id = $1
      AND {{ visible(m, false) }}
      AND {{ current(m, NULL::timestamptz) }}
      AND {{ unseen(m, $6, $7::text) }}
      AND NOT m.pinned
      AND m.kind = 'episode'
      AND (m.expires_at IS NULL OR m.expires_at > now())
      AND CASE $2::text
              WHEN 'this-session' THEN m.metadata->>'session_id' = $3::text
              WHEN 'other-sessions' THEN m.metadata->>'session_id' IS DISTINCT FROM $3::text
              ELSE false
          END
    ORDER BY m.created_at DESC, m.id DESC
    LIMIT $5
)
SELECT 'pinned' AS section, 1 AS section_order, * FROM pinned
UNION ALL
SELECT 'curated', 2, * FROM curated
UNION ALL
SELECT 'episodes', 3, * FROM episodes
ORDER BY section_order, position
"""


@dataclass(frozen=True, slots=True)
class Plan:
    """What one source shows: which episodes, and how many characters in all."""

    episodes: EpisodeMode
    max_chars: int
    episode_heading: str
    max_bytes: int | None = None
    """For a host that counts UTF-8 bytes (Codex), the most bytes in all."""


def plan_for(source: str | None, max_chars: int) -> Plan:
    """The plan for `source`; an unknown or missing one is treated as a new session (startup)."""
    if source == "compact":
        return Plan("this-session", max_chars, "Earlier in this session (before compaction):")
    if source == "resume":
        return Plan("none", max(max_chars // 2, 200), "")
    if source == "clear":
        return Plan("none", max_chars, "")
    return Plan("other-sessions", max_chars, "Recent sessions (captured exchanges, newest first):")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _line(row: asyncpg.Record) -> str:
    content = " ".join(row["content"].split())
    if row["kind"] == "episode":
        return _clip(
            f"- #{row['public_id']} [episode {row['created_at']:%Y-%m-%d}] {content}", EPISODE_LINE_CHARS
        )
    category = f" [{row['category']}]" if row["category"] else ""
    return _clip(f"- #{row['public_id']}{category} {content}", MEMORY_LINE_CHARS)


def header(namespace: str, source: str) -> str:
    return (
        f"Memoria: memories of namespace {namespace} for this session ({source}); curated first, "
        "then captured exchanges. Saved earlier, they may be out of date; memory_get fetches one in full."
    )


def render(namespace: str, source: str, rows: Sequence[asyncpg.Record], plan: Plan) -> tuple[str, int]:
    """(text, memories included) within `plan.max_chars`; ("", 0) when no memory fits."""
    text, included = layout(namespace, source, rows, plan)
    return text, len(included)


def layout(
    namespace: str, source: str, rows: Sequence[asyncpg.Record], plan: Plan
) -> tuple[str, list[asyncpg.Record]]:
    """(text, the rows it shows) within `plan.max_chars`; ("", []) when no memory fits."""
    headings = {"pinned": "Pinned:", "curated": "Most important:", "episodes": plan.episode_heading}
    text = header(namespace, source)
    included: list[asyncpg.Record] = []
    section = None
    for row in rows:
        line = "\n" + _line(row)
        heading = "" if row["section"] == section else "\n" + headings[row["section"]]
        if not within(text + heading + line, plan.max_chars, plan.max_bytes):
            continue  # skipped, not cut: a shorter line further on may still fit
        text += heading + line
        section = row["section"]
        included.append(row)
    return (text, included) if included else ("", [])


def _episode_rows(source: str, startup_episodes: int) -> int:
    if source == "startup":
        return startup_episodes
    return EPISODE_ROWS.get(source, 0)


async def session_start_context(
    pool: asyncpg.Pool,
    user_id: int,
    namespace: str,
    source: str | None,
    session_id: str | None,
    max_chars: int,
    ledger: SessionLedger | None = None,
    *,
    startup_episodes: int = 0,
    max_bytes: int | None = None,
) -> tuple[str, int]:
    """(additionalContext, memories included) for `user_id`'s `namespace` (one of theirs, or one
    shared with them as `@owner/name`); NotFound when they have none by that name. With `ledger`,
    what the session was given is left out and what is shown is recorded. A startup shows the
    `startup_episodes` most recent episodes of other sessions (none by default). `max_bytes` caps
    the text in UTF-8 bytes too, for a host that counts them."""
    plan = replace(plan_for(source, max_chars), max_bytes=max_bytes)
    shown_source = source if source in ("startup", "resume", "clear", "compact") else "startup"
    if ledger is not None and shown_source == "compact":
        await _release_pinned(ledger)
    async with pool.acquire() as conn:
        (scope,) = await resolve_scope(conn, user_id, [namespace])
        rows = await conn.fetch(
            with_ledger_fragments(START_CONTEXT),
            scope.id,
            plan.episodes,
            session_id,
            SECTION_ROWS,
            _episode_rows(shown_source, startup_episodes) if plan.episodes != "none" else 0,
            user_id,
            ledger.session_id if ledger is not None else None,
        )
    if ledger is None:
        text, included = layout(namespace, shown_source, rows, plan)
        return text, len(included)
    by_id = {row["public_id"]: row for row in rows}

    def arrange(unseen: list[int], remaining: int | None) -> tuple[str, list[int]]:
        room = plan.max_chars if remaining is None else min(plan.max_chars, remaining)
        text, shown = layout(
            namespace, shown_source, [by_id[public_id] for public_id in unseen], replace(plan, max_chars=room)
        )
        return text, [row["public_id"] for row in shown]

    try:
        given = await ledger.give(list(by_id), arrange)
    except Exception:  # bookkeeping: the session starts with its memories all the same
        log.warning("session start ledger: recording the injected memories failed", exc_info=True)
        text, included = layout(namespace, shown_source, rows, plan)
        return text, len(included)
    return given.text, len(given.included)


async def _release_pinned(ledger: SessionLedger) -> None:
    """After a compaction the pinned memories are shown again: the summary may have dropped them,
    and they are pinned to be in context always. Everything else the session was given stays given
    (its gist is in the summary, and showing it again is the repetition the ledger exists to stop).
    A failure only means the pinned memories are not shown again."""
    try:
        await ledger.release_pinned()
    except Exception:
        log.warning("session start ledger: releasing pinned memories after compaction failed", exc_info=True)
