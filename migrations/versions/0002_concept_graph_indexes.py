"""Concept graph: per-namespace graph size, concept lookups and the concept-embedding HNSW index.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Number of memories with extracted concepts: the N of the graph leg's specificity weighting
    # and of the hub ceiling, kept incrementally so recall never counts rows.
    op.execute("ALTER TABLE namespaces ADD COLUMN graph_memories integer NOT NULL DEFAULT 0")
    op.execute("CREATE INDEX concepts_namespace_df_idx ON concepts (namespace_id, doc_freq)")
    with op.get_context().autocommit_block():
        op.execute(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS concepts_embedding_hnsw_idx "
            "ON concepts USING hnsw (embedding halfvec_cosine_ops) WITH (m = 16, ef_construction = 64)"
        )


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS concepts_embedding_hnsw_idx")
    op.execute("DROP INDEX concepts_namespace_df_idx")
    op.execute("ALTER TABLE namespaces DROP COLUMN graph_memories")
