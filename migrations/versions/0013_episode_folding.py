"""Repeated exchanges fold into the episode they repeat (issue #35): a seen count, a last-seen time.

- `memories.seen_count`: how many captured exchanges this episode stands for (1: itself).
- `memories.last_seen_at`: when the last exchange folded into it happened (NULL: never folded);
  a sighting no later than it is not counted again, which keeps a re-sent capture from counting
  twice.
- `memories.fold_key`: the capture's fingerprint of the exchange (a hash of its normalised prompt
  and reply, app/capture/fold.py); only captured episodes have one. A new exchange with the same
  key in the same namespace folds into the live memory holding it instead of becoming a new row.

The columns are instant on a large live table (a constant default, nullable ones); the index that
finds the episode to fold into is built CONCURRENTLY, alone outside a transaction.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "ALTER TABLE memories ADD COLUMN seen_count integer NOT NULL DEFAULT 1 "
        "CONSTRAINT memories_seen_count_check CHECK (seen_count >= 1)"
    )
    op.execute("ALTER TABLE memories ADD COLUMN last_seen_at timestamptz")
    op.execute("ALTER TABLE memories ADD COLUMN fold_key bytea")
    with op.get_context().autocommit_block():
        # The capture's fold lookup: a namespace's live memory holding this fingerprint.
        op.execute(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS memories_fold_key_idx "
            "ON memories (namespace_id, fold_key) WHERE fold_key IS NOT NULL AND deleted_at IS NULL"
        )


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS memories_fold_key_idx")
    for column in ("fold_key", "last_seen_at", "seen_count"):
        op.execute(f"ALTER TABLE memories DROP COLUMN {column}")
