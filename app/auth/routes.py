"""`GET /v1/me`: who a key acts for and what it may do, so a client can check a key before using it
(the hook installers warn when a hook is given a key that can do more than read)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec
from litestar import Request, get
from litestar.datastructures import State

from app.auth import sql
from app.auth.scopes import ALL_SCOPES, ANY_KEY, SCOPE_OPT
from app.auth.service import AuthUser


class Me(msgspec.Struct, kw_only=True):
    user: str
    key_id: int
    key_prefix: str
    scopes: list[str]
    expires_at: datetime | None


@get(
    "/me",
    tags=["keys"],
    summary="The calling key: its user, prefix, scopes and expiry",
    opt={SCOPE_OPT: ANY_KEY},
)
async def get_me(request: Request[AuthUser, int, Any], state: State) -> Me:
    user = request.user
    row = await state.db.write.fetchrow(sql.KEY_DETAILS, user.key_id)
    return Me(
        user=user.name,
        key_id=user.key_id,
        key_prefix=row["prefix"] if row else "",
        scopes=[scope for scope in ALL_SCOPES if scope in user.scopes],
        expires_at=row["expires_at"] if row else None,
    )
