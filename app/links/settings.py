"""The links section (`MEMORIA_LINKS__*`): what the service does with links on its own."""

from __future__ import annotations

from pydantic import Field

from app.core.settings import Section


class LinkSettings(Section):
    """Links made without anyone asking: the automatic supersede on store and capture."""

    auto_supersede: bool = Field(
        default=True,
        description=(
            "A stored memory that restates an older one of its namespace with different specifics "
            "supersedes it (an `auto` link, with its reason) when the rule is confident, and is offered "
            "in the store's answer when it is not. False: neither."
        ),
    )
    supersede_candidates: int = Field(
        default=5, ge=1, le=50, description="Nearest older memories the rule judges for each new memory."
    )
