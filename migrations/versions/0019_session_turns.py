"""Captured turns by their place in their session: the previous turn of a turn in one index lookup.

A captured turn is embedded with its neighbourhood (app/embeddings/inputs.sql): the latest earlier
live, non-sensitive captured memory of the same session in the same namespace. Every path that
embeds a memory (the embedding job, `memoria embeddings backfill`, `reembed`) looks that neighbour up
for each memory of a batch; without this index each lookup would read every memory of the
namespace. The key is the order the rule reads turns in: the session, the turn, the chunk, then the
time and the id (ties of a batch stored at once). jsonb keeps numbers in numeric order, so `turn`
and `chunk` are indexed as stored, with no cast that a malformed value could fail.

Built CONCURRENTLY, alone in autocommit: a big table keeps taking writes meanwhile.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS memories_session_turns_idx "
            "ON memories (namespace_id, (metadata->>'session_id'), (metadata->'turn'), "
            "(metadata->'chunk'), created_at, id) "
            "WHERE capture_key IS NOT NULL AND deleted_at IS NULL"
        )


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS memories_session_turns_idx")
