"""What every settings section has in common, and the one-line message for a bad value.

Each domain owns its section (`app/<domain>/settings.py`); `app.settings` composes them at the root.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, ValidationError


class Section(BaseModel):
    """A settings section: unknown keys are refused (a typo must not pass silently) and values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def describe_invalid(exc: ValidationError, env_prefix: str | None = "MEMORIA_") -> str:
    """One line naming each bad value as a user would set it: `MEMORIA_RECALL__LEG_DEPTH: ...` for
    environment variables, `provider: ...` for fields (`env_prefix=None`)."""
    parts: list[str] = []
    for error in exc.errors():
        loc = [str(part) for part in error["loc"] if not isinstance(part, int)]
        where = env_prefix + "__".join(loc).upper() if env_prefix is not None and loc else ".".join(loc)
        message = error["msg"].removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts) or str(exc)
