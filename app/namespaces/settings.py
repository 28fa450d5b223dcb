"""The namespaces section (`MEMORIA_NAMESPACES__*`): what one user's namespaces may cost."""

from __future__ import annotations

from pydantic import Field

from app.core.settings import Section


class NamespaceSettings(Section):
    """Bounds on a user's own namespaces. Writes create a namespace on first use, so without a cap
    one key could create them without end, and every recall across all of them, every namespace
    list and every overview page reads each one."""

    max_per_user: int = Field(
        default=1000,
        ge=1,
        le=1_000_000,
        description=(
            "Most namespaces of their own a user may hold. A write that would create more is refused "
            "whole (409, nothing of its batch stored); namespaces shared with the user do not count."
        ),
    )
