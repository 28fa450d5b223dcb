"""The Claude Code hook endpoint's section."""

from __future__ import annotations

from pydantic import Field, model_validator

from app.core.settings import Section
from app.errors import InvalidInput
from app.namespaces.service import validate_namespace_name


class HookSettings(Section):
    """The Claude Code hook endpoints (`/v1/hooks/claude-code/user-prompt-submit` and `/session-start`)."""

    enabled: bool = Field(default=True, description="False answers every hook call with an empty {}.")
    budget_ms: int = Field(
        default=300, ge=1, le=10_000, description="Server-side time for one recall; past it the answer is {}."
    )
    max_context_chars: int = Field(
        default=3000, ge=200, le=9000, description="Longest additionalContext (Claude Code keeps 10,000)."
    )
    max_results: int = Field(default=8, ge=1, le=50, description="Most memories injected per prompt.")
    min_score: float = Field(default=0.0, ge=0, description="Recall hits scoring below this are left out.")
    min_similarity: float = Field(
        default=0.24,
        ge=-1,
        le=1,
        description="Relevance floor, dense signal: a prompt gets context only when a recalled memory's "
        "cosine similarity to it reaches this, or its lexical score reaches `min_lexical_score` "
        "(recall's fused scores are ranks and cannot tell an unrelated prompt). -1 turns this bar off; "
        "with no lexical bar either, the floor is off. `memoria bench quality --floor` calibrates it.",
    )
    min_lexical_score: float | None = Field(
        default=None,
        ge=0,
        description="Relevance floor, lexical signal: a recalled memory whose lexical score (the text "
        "leg's rank score for the prompt's words) reaches this clears the floor too. "
        "Unset turns this bar off.",
    )
    episode_min_score_ratio: float = Field(
        default=0.6,
        ge=0,
        le=1,
        description="A captured episode is injected only when its score is at least this fraction of the "
        "best hit's (curated memories come first; 1 = only an episode that is the best hit itself).",
    )
    start_episodes: int = Field(
        default=0,
        ge=0,
        le=20,
        description="Captured exchanges of other sessions a new session starts with (newest first), "
        "whatever the session is about. 0: a new session starts with pinned and important curated "
        "memories only, and the prompt hook recalls the episodes a prompt is about.",
    )
    session_start_max_chars: int = Field(
        default=4000,
        ge=200,
        le=9000,
        description="Longest SessionStart additionalContext (a resume gets half: its conversation is back).",
    )
    ledger_ttl_hours: float = Field(
        default=24.0,
        ge=0,
        le=24 * 30,
        description="How long a session remembers what it was given: a memory injected into a session "
        "(SessionStart or a prompt) is not injected into it again for this long; the expiry sweep then "
        "deletes the record. 0 turns the per-session ledger off.",
    )
    session_max_chars: int = Field(
        default=16_000,
        ge=0,
        le=1_000_000,
        description="One context budget per session: the characters SessionStart (every source) and the "
        "prompt hook may inject into one session together, counted by the ledger while its records live "
        "(`ledger_ttl_hours`); once spent, prompts get nothing. A compaction gives back what its pinned "
        "memories cost (they are shown again). 0 = no session budget; needs the ledger.",
    )
    min_prompt_chars: int = Field(
        default=12, ge=1, le=1000, description="Shorter prompts (after code is set aside) skip recall."
    )
    default_namespace: str | None = Field(
        default=None,
        description="Namespace for a hook call that names none (a user-scope http hook); unset = no recall. "
        "The server never derives one from the event's cwd.",
    )

    @model_validator(mode="after")
    def _name_is_valid(self) -> HookSettings:
        """A default namespace the API would refuse fails at start, not on every prompt."""
        if self.default_namespace is not None:
            try:
                validate_namespace_name(self.default_namespace)
            except InvalidInput as exc:
                raise ValueError(exc.detail) from exc
        return self
