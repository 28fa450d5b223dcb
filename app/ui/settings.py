"""The web UI section (`MEMORIA_UI__*`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from app.core.settings import Section


class UiSettings(Section):
    """A person signs in with an API key; the browser then holds a session cookie (app.auth.sessions)."""

    enabled: bool = Field(default=True, description="Serve the web UI under `/` (the API stays under /v1).")
    session_hours: float = Field(
        default=12.0, gt=0, le=24 * 30, description="How long a sign-in lasts before the key is asked again."
    )
    secure_cookie: Literal["auto", "always", "never"] = Field(
        default="auto",
        description=(
            "The session cookie's `Secure` flag: `auto` sets it when the request came over https (as "
            "uvicorn sees it, behind a trusted proxy too), `always` whatever the scheme."
        ),
    )
    page_size: int = Field(default=25, ge=1, le=200, description="Memories per page of the list.")
