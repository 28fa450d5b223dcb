"""Graph-leg read paths: memory links per concept newest first, and edges of a concept by weight.

The graph leg reads a bounded number of links per concept and the strongest edges of each concept;
both now come in order from an index instead of a sort over every row.

Also drops concepts_namespace_df_idx: the planner ANDed it into exact name lookups, which only
made seeding slower (EXPLAIN at 100k memories).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS memory_concepts_concept_memory_idx "
            "ON memory_concepts (concept_id, memory_id DESC)"
        )
    with op.get_context().autocommit_block():
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS memory_concepts_concept_idx")
    with op.get_context().autocommit_block():
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS concepts_namespace_df_idx")
    for end in ("source", "target"):
        with op.get_context().autocommit_block():
            op.execute(
                f"CREATE INDEX CONCURRENTLY IF NOT EXISTS concept_edges_{end}_weight_idx "
                f"ON concept_edges ({end}_id, weight DESC) WHERE valid_to IS NULL"
            )
    with op.get_context().autocommit_block():
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS concept_edges_target_idx")


def downgrade() -> None:
    op.execute("CREATE INDEX IF NOT EXISTS concept_edges_target_idx ON concept_edges (target_id)")
    op.execute("DROP INDEX IF EXISTS concept_edges_source_weight_idx")
    op.execute("DROP INDEX IF EXISTS concept_edges_target_weight_idx")
    op.execute("CREATE INDEX IF NOT EXISTS concepts_namespace_df_idx ON concepts (namespace_id, doc_freq)")
    with op.get_context().autocommit_block():
        op.execute(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS memory_concepts_concept_idx "
            "ON memory_concepts (concept_id)"
        )
    with op.get_context().autocommit_block():
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS memory_concepts_concept_memory_idx")
