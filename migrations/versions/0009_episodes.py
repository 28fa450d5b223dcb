"""Episodes (issue #18): captured exchanges beside curated memories, pinning, expiry, idempotent capture.

- `memories.kind`: `memory` (curated: stored by a person, an agent's tool call, an import) or
  `episode` (one exchange of a Claude Code session, captured by the hooks without an LLM). Recall
  filters on it and the hooks prefer curated memories.
- `memories.pinned`: SessionStart always injects pinned memories first.
- `memories.expires_at`: when an episode goes (NULL: never). Recall pushes it back for the episodes
  it returns, promotion clears it; the expiry job deletes what is past it in small batches.
- `memories.capture_key`: the capture's idempotency key (`<session>:<turn>:<chunk>`), unique per
  namespace, so a spool flushed twice (a crash mid-flush, the same hook event fired again) stores
  each exchange once.
- `jobs.memory_id` becomes nullable: the expiry job is about a namespace-wide sweep, not a memory.

Every step is instant on a large live table (nullable columns, defaults that are constants) except
the indexes (the capture key's, the expiry sweep's, and SessionStart's two), built CONCURRENTLY,
each alone outside a transaction.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "ALTER TABLE memories ADD COLUMN kind text NOT NULL DEFAULT 'memory' "
        "CONSTRAINT memories_kind_check CHECK (kind IN ('memory', 'episode'))"
    )
    op.execute("ALTER TABLE memories ADD COLUMN pinned boolean NOT NULL DEFAULT false")
    op.execute("ALTER TABLE memories ADD COLUMN expires_at timestamptz")
    op.execute(
        "ALTER TABLE memories ADD COLUMN capture_key text "
        "CONSTRAINT memories_capture_key_check CHECK (char_length(capture_key) BETWEEN 1 AND 300)"
    )
    op.execute("ALTER TABLE jobs ALTER COLUMN memory_id DROP NOT NULL")
    with op.get_context().autocommit_block():
        # The idempotency key of a capture: one exchange chunk per namespace, deleted or not (an
        # exchange forgotten by its owner is not captured again by the next flush).
        op.execute(
            "CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS memories_capture_key_idx "
            "ON memories (namespace_id, capture_key) WHERE capture_key IS NOT NULL"
        )
    with op.get_context().autocommit_block():
        # The expiry sweep's scan: only rows that can expire, soonest first.
        op.execute(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS memories_expires_at_idx "
            "ON memories (expires_at) WHERE expires_at IS NOT NULL"
        )
    with op.get_context().autocommit_block():
        # SessionStart's first rows: a namespace's pinned memories (a seq scan of a 100k namespace
        # took ~40 ms of the 150 ms the hook has end to end).
        op.execute(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS memories_pinned_idx "
            "ON memories (namespace_id) WHERE pinned AND deleted_at IS NULL"
        )
    with op.get_context().autocommit_block():
        # ... then its curated memories, most important and newest first, read in index order.
        op.execute(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS memories_curated_rank_idx "
            "ON memories (namespace_id, importance DESC, created_at DESC, id DESC) "
            "WHERE kind = 'memory' AND deleted_at IS NULL"
        )


def downgrade() -> None:
    for index in ("memories_curated_rank_idx", "memories_pinned_idx", "memories_expires_at_idx"):
        with op.get_context().autocommit_block():
            op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {index}")
    with op.get_context().autocommit_block():
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS memories_capture_key_idx")
    op.execute("DELETE FROM jobs WHERE memory_id IS NULL")
    op.execute("ALTER TABLE jobs ALTER COLUMN memory_id SET NOT NULL")
    for column in ("capture_key", "expires_at", "pinned", "kind"):
        op.execute(f"ALTER TABLE memories DROP COLUMN {column}")
