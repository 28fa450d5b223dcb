"""How Gemini CLI's hook events read, for the hook client (`--agent gemini`).

Gemini CLI sends every command hook a JSON object on stdin with `session_id`, `transcript_path`
(its session file), `cwd`, `hook_event_name` and `timestamp`, plus the event's own fields:
SessionStart `source` (`startup`, `resume`, `clear`), BeforeAgent and AfterAgent `prompt`,
AfterAgent `prompt_response`, PreCompress `trigger`, SessionEnd `reason`. The fields Memoria reads
have Claude Code's names already; what differs:

- the prompt event is `BeforeAgent`, and its `prompt` carries what SessionStart hooks added in a
  `gemini -p` run (`<hook_context>…</hook_context>` in front of the text): cut out here, so recall
  searches for what the person asked, not for the memories injected a moment before;
- the turn is over at `AfterAgent`, the session at `SessionEnd`, and the session file is JSONL of
  Gemini CLI's own records (`memoria_hook_client.gemini_transcript`).

An answer is read from `hookSpecificOutput.additionalContext`, as Claude Code's; Gemini CLI shows
a hook's stderr (or stdout that is not JSON) as a warning, so the client prints one JSON object or
nothing, and nothing on stderr. Standard library only, no pathlib or typing at run time.
"""

from __future__ import annotations

from memoria_hook_client.gemini_transcript import without_hook_context

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "gemini"
PROMPT_EVENT = "BeforeAgent"
START_EVENT = "SessionStart"
#: Capture events after which the model's last text is its final answer, and the last event of all.
TURN_OVER_EVENTS = ("AfterAgent",)
FINAL_EVENTS = ("SessionEnd",)


def normalised(event: dict[str, Any]) -> dict[str, Any]:
    """`event` as the hook routes read it: the prompt without the context hooks added to it."""
    prompt = event.get("prompt")
    if isinstance(prompt, str):
        return {**event, "prompt": without_hook_context(prompt)}
    return event
