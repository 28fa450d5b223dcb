"""The HNSW index is rebuilt with ef_construction 128 (was 64): recall@10 at a million (issue #20).

At 1M memories the dense leg's top 10 in a 500k-memory namespace matched exact search 0.9685 of
the time (200 queries, 95% CI [0.957, 0.980]) with the graph built at ef_construction 64, and a
bigger ef_search barely helped (0.973 at 400): the misses were neighbours the walk never reached,
not ties. Built at 128, the same queries gave 0.9855 [0.980, 0.991] at the same ef_search 200.
`m` stays 16, so the index is the same size (1,115 MB at 1M memories of 384 dimensions); building
it takes about twice as long (17 min at 1M on two busy cores, `maintenance_work_mem` 2GB and one
parallel worker), and each stored memory's insertion searches twice as many candidates.

The new index is built beside the old one, CONCURRENTLY, so recall keeps its index meanwhile; then
the old one is dropped and the new one takes its name. Run again after an interruption, it goes
on from where it stopped (an invalid half-built index is built again). On a big table, give the session enough
`maintenance_work_mem` for the graph to fit (about the index's size), or the build spills and is
far slower.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _rebuild(ef_construction: int) -> None:
    # A build that was interrupted leaves an invalid index behind: build it again rather than
    # let it take the old one's place.
    invalid = (
        op.get_bind()
        .execute(
            sa.text(
                "SELECT NOT indisvalid FROM pg_index "
                "WHERE indexrelid = to_regclass('memories_embedding_hnsw_next')"
            )
        )
        .scalar()
    )
    if invalid:
        with op.get_context().autocommit_block():
            op.execute("DROP INDEX CONCURRENTLY IF EXISTS memories_embedding_hnsw_next")
    with op.get_context().autocommit_block():
        op.execute(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS memories_embedding_hnsw_next ON memories "
            f"USING hnsw (embedding halfvec_cosine_ops) WITH (m = 16, ef_construction = {ef_construction})"
        )
    with op.get_context().autocommit_block():
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS memories_embedding_hnsw_idx")
    op.execute("ALTER INDEX memories_embedding_hnsw_next RENAME TO memories_embedding_hnsw_idx")


def upgrade() -> None:
    _rebuild(128)


def downgrade() -> None:
    _rebuild(64)
