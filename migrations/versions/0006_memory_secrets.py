"""Sealed originals of the credentials redacted from memories (`memory_secrets`).

A stored memory holds placeholders (`[secret:github-token#1]`) where credentials were; with an
encryption key configured, each original is kept here, AES-256-GCM encrypted, under its placeholder
number (`ordinal`). `key_id` names the key it is sealed under (rotation re-seals rows under the
active one); `nonce` is the 96-bit GCM nonce and `ciphertext` includes the tag. The memory id,
ordinal and kind are the associated data, so a row moved to another memory does not decrypt.

The primary key serves the reads of one memory's originals, the cascade from `memories` and the
rotation's keyset walk. The table is new and empty: nothing to build concurrently.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-26
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE memory_secrets (
            memory_id  bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            ordinal    integer NOT NULL CHECK (ordinal >= 1),
            kind       text NOT NULL CHECK (char_length(kind) BETWEEN 1 AND 40),
            key_id     text NOT NULL CHECK (char_length(key_id) BETWEEN 1 AND 64),
            nonce      bytea NOT NULL CHECK (octet_length(nonce) = 12),
            ciphertext bytea NOT NULL CHECK (octet_length(ciphertext) >= 16),
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (memory_id, ordinal)
        )
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE memory_secrets")
