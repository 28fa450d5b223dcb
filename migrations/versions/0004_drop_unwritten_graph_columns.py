"""Drop the graph columns nothing writes; edge indexes that also serve the foreign-key checks.

`concept_edges.valid_to` and `memory_concepts.weight` were never written (an edge that loses its
last evidence memory is deleted, and a link has no weight of its own). The edge indexes were partial
on `valid_to IS NULL`, so they could not serve the `ON DELETE CASCADE` check of `target_id`: every
deleted concept scanned the whole edge table. The new indexes are the same columns without the
predicate; `(target_id, weight DESC)` now serves that check, and the unique
`(source_id, target_id, relation)` serves the one of `source_id`.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ENDS = ("source", "target")


def upgrade() -> None:
    for end in _ENDS:
        with op.get_context().autocommit_block():
            op.execute(
                f"CREATE INDEX CONCURRENTLY IF NOT EXISTS concept_edges_{end}_strongest_idx "
                f"ON concept_edges ({end}_id, weight DESC)"
            )
    for end in _ENDS:
        with op.get_context().autocommit_block():
            op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS concept_edges_{end}_weight_idx")
    op.execute("ALTER TABLE concept_edges DROP COLUMN IF EXISTS valid_to")
    op.execute("ALTER TABLE memory_concepts DROP COLUMN IF EXISTS weight")


def downgrade() -> None:
    op.execute("ALTER TABLE memory_concepts ADD COLUMN IF NOT EXISTS weight real NOT NULL DEFAULT 1")
    op.execute("ALTER TABLE concept_edges ADD COLUMN IF NOT EXISTS valid_to timestamptz")
    for end in _ENDS:
        with op.get_context().autocommit_block():
            op.execute(
                f"CREATE INDEX CONCURRENTLY IF NOT EXISTS concept_edges_{end}_weight_idx "
                f"ON concept_edges ({end}_id, weight DESC) WHERE valid_to IS NULL"
            )
    for end in _ENDS:
        with op.get_context().autocommit_block():
            op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS concept_edges_{end}_strongest_idx")
