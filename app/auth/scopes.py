"""What an API key may do. A route names the one scope it needs in its `opt` (`SCOPE_OPT`); a
route that names none needs `read` for GET/HEAD/OPTIONS and `write` for everything else.

- `read`: recall, list, read memories and the concept graph; the recall hook.
- `write`: store, change, delete and import memories.
- `admin`: manage the user's own keys and namespace shares; `/readyz` details.
- `secrets:read`: the sealed originals of a memory's redacted credentials (owner only, audited).
  Never implied by another scope, never granted to existing keys by a migration.
"""

from __future__ import annotations

from typing import Final

READ: Final = "read"
WRITE: Final = "write"
ADMIN: Final = "admin"
SECRETS_READ: Final = "secrets:read"

ALL_SCOPES: Final = (READ, WRITE, ADMIN, SECRETS_READ)
DEFAULT_SCOPES: Final = (READ, WRITE)
"""What `memoria keys create` grants without `--scope`."""

SCOPE_OPT: Final = "scope"
"""The route `opt` key naming the scope a route needs."""

ANY_KEY: Final = "any-key"
"""A route `opt[SCOPE_OPT]` value: every valid key may call it, whatever its scopes (`GET /v1/me`)."""
