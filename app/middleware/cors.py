"""Cross-origin access: off unless `MEMORIA_SERVER__CORS_ORIGINS` names the web origins allowed.

The API holds one user's memories behind a bearer key; a page on another origin has no business
calling it unless its operator says so. With no origins configured Litestar gets no `CORSConfig`, so
no answer carries `Access-Control-Allow-Origin` and a browser refuses every cross-origin read (a
preflight gets the plain `OPTIONS` answer and no grant). With origins, only those get a grant, for
the methods and headers the API uses; credentials (cookies) are never allowed: keys travel in
`Authorization`, which the page must send itself.
"""

from __future__ import annotations

from collections.abc import Sequence

from litestar.config.cors import CORSConfig
from litestar.types import Method

from app.core.logs import REQUEST_ID_HEADER

ALLOWED_METHODS: list[Method] = ["GET", "POST", "PUT", "PATCH", "DELETE"]
ALLOWED_HEADERS = ["Authorization", "Content-Type", REQUEST_ID_HEADER]
EXPOSED_HEADERS = ["Retry-After", REQUEST_ID_HEADER]
PREFLIGHT_MAX_AGE_S = 600


def cors_config(origins: Sequence[str]) -> CORSConfig | None:
    """Litestar's CORS configuration for `origins` (`ServerSettings.cors_origins`); None (CORS off)
    when there are none."""
    if not origins:
        return None
    return CORSConfig(
        allow_origins=list(origins),
        allow_methods=list(ALLOWED_METHODS),
        allow_headers=ALLOWED_HEADERS,
        expose_headers=EXPOSED_HEADERS,
        allow_credentials=False,
        max_age=PREFLIGHT_MAX_AGE_S,
    )
