"""Trust (issue #16): scoped, expiring keys; rate-limit buckets; redacted memories and an audit of
who read their sealed originals; namespaces shared between users.

- `api_keys.scopes`: what a key may do, among `read`, `write`, `admin` and `secrets:read`. Keys made
  before this revision could do everything the API offered, so they keep `read`, `write` and
  `admin`; `secrets:read` is new and is only ever granted on purpose. New keys default to
  `read`+`write`. `expires_at` (optional) ends a key without a revoke; `last_used_at` is written
  at most once a minute per key, so listing keys shows which are still in use.
- `rate_limits`: token buckets (a key's requests, a client address's failed authentications)
  shared by every replica through the one primary. UNLOGGED: a crash forgets counters, which only
  ever lets a client through early; it never loses data. Idle buckets are swept by
  `rate_limits_idle_idx`.
- `memories.has_secrets`: the memory's text holds credential placeholders (`[secret:kind#n]`).
  A constant default: PostgreSQL adds the column without rewriting the table.
- `secret_reads`: one row per owner read of a memory's sealed originals. No foreign key to
  `memories`: the record of a read outlives a purge of what was read.
- `namespace_shares`: a namespace's owner lets another user read it, or read and write it. The
  grantee index serves "what is shared with me" and the namespace resolution of every request
  that names a shared namespace.

Every new table is new and empty and every index is on a new table (api_keys is a few rows), so
nothing needs CONCURRENTLY.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        ALTER TABLE api_keys
            ADD COLUMN scopes text[] NOT NULL DEFAULT '{read,write}'
                CHECK (cardinality(scopes) >= 1 AND scopes <@ '{read,write,admin,secrets:read}'::text[]),
            ADD COLUMN expires_at timestamptz,
            ADD COLUMN last_used_at timestamptz
        """
    )
    op.execute("UPDATE api_keys SET scopes = '{read,write,admin}'")

    op.execute(
        """
        CREATE UNLOGGED TABLE rate_limits (
            bucket     text PRIMARY KEY CHECK (char_length(bucket) BETWEEN 1 AND 200),
            tokens     double precision NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    op.execute("CREATE INDEX rate_limits_idle_idx ON rate_limits (updated_at)")

    op.execute("ALTER TABLE memories ADD COLUMN has_secrets boolean NOT NULL DEFAULT false")
    op.execute(
        """
        CREATE TABLE secret_reads (
            id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            memory_id bigint NOT NULL,
            user_id   bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
            key_id    bigint REFERENCES api_keys (id) ON DELETE SET NULL,
            secrets   integer NOT NULL CHECK (secrets >= 0),
            client    text CHECK (char_length(client) <= 200),
            read_at   timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    op.execute("CREATE INDEX secret_reads_user_idx ON secret_reads (user_id, read_at DESC)")

    op.execute(
        """
        CREATE TABLE namespace_shares (
            namespace_id bigint NOT NULL REFERENCES namespaces (id) ON DELETE CASCADE,
            grantee_id   bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
            permission   text NOT NULL CHECK (permission IN ('read', 'write')),
            created_at   timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (namespace_id, grantee_id)
        )
        """
    )
    op.execute("CREATE INDEX namespace_shares_grantee_idx ON namespace_shares (grantee_id)")


def downgrade() -> None:
    op.execute("DROP TABLE namespace_shares")
    op.execute("DROP TABLE secret_reads")
    op.execute("ALTER TABLE memories DROP COLUMN has_secrets")
    op.execute("DROP TABLE rate_limits")
    op.execute("ALTER TABLE api_keys DROP COLUMN last_used_at, DROP COLUMN expires_at, DROP COLUMN scopes")
