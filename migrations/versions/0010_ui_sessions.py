"""Web UI sessions (issue #21).

A person signs in to the web UI with an API key; the browser then holds only a random session
token in an HttpOnly cookie. The server keeps the session here, not in the cookie, so:

- the API key never travels again after sign-in, and is never stored (the session points at the key);
- signing out, revoking the key or deleting it ends the session on every replica at once (the
  lookup joins the key; `ON DELETE CASCADE` removes sessions of a deleted key);
- the CSRF token every form carries is the session's own (`csrf_token`), checked on each POST.

`token_hash` is SHA-256 of the cookie's token: a copy of this table opens no session. An expiry
index lets the sign-in sweep delete old sessions cheaply. A new, empty table: nothing to backfill.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE ui_sessions (
            token_hash bytea PRIMARY KEY CONSTRAINT ui_sessions_token_hash_check
                CHECK (octet_length(token_hash) = 32),
            key_id bigint NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
            csrf_token text NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            expires_at timestamptz NOT NULL
        )
        """
    )
    op.execute("CREATE INDEX ui_sessions_key_idx ON ui_sessions (key_id)")
    op.execute("CREATE INDEX ui_sessions_expires_idx ON ui_sessions (expires_at)")


def downgrade() -> None:
    op.execute("DROP TABLE ui_sessions")
