"""Whether the key a hook will use can do more than the hook needs (`memoria hook install` warns).

The recall hook only reads, yet it runs on every prompt with a key held in the environment or a
file of an agent's machine: a key that can also write, delete or manage keys is a larger loss when it
leaks. The installer asks the server which scopes the key has (`GET /v1/me`) and says so when it is
more than `read`. The check is advice, never a gate: no key, no server, an older server without
`/v1/me`, or any other failure and it says nothing, because installing must work offline.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import httpx

from app.auth.scopes import READ

ME_PATH = "/v1/me"
CHECK_TIMEOUT_S = 3.0


@dataclass(frozen=True, slots=True)
class KeyGrant:
    """What `/v1/me` says about a key: its scopes and, when it names one, its user."""

    scopes: frozenset[str]
    user: str | None


def key_grant(url: str, key: str, timeout: float = CHECK_TIMEOUT_S) -> KeyGrant | None:
    """What the server reports for `key`, or None when it cannot tell us (any failure)."""
    try:
        response = httpx.get(
            url.rstrip("/") + ME_PATH, headers={"Authorization": f"Bearer {key}"}, timeout=timeout
        )
        body = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None
    if not isinstance(body, dict):
        return None
    scopes = body.get("scopes")
    if not isinstance(scopes, list) or not all(isinstance(scope, str) for scope in scopes):
        return None
    user = body.get("user")
    if isinstance(user, dict):
        user = user.get("name")
    return KeyGrant(frozenset(scopes), user if isinstance(user, str) else None)


def excess_scopes_warning(scopes: Iterable[str], user: str | None = None) -> str | None:
    """The warning to print when `scopes` hold more than `read`, else None."""
    extra = sorted(set(scopes) - {READ})
    if not extra:
        return None
    who = user or "USER"
    return (
        f"warning: the hook's key can also {', '.join(extra)}; it only needs read. "
        f"A read-only key limits what a leaked one can do: `memoria keys create --user {who} --scope read`."
    )
