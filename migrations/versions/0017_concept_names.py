"""Concepts by name across namespaces: the graph leg's name seeds read a scope in one lookup (issue #36).

Recall seeds its graph leg with the concepts the query names, in every namespace of the scope. The
only index that found a concept by name was the (namespace_id, name) key, which needs the namespace
first, so the seeds were read one namespace at a time: a caller's thousand namespaces made a
thousand lookups, the cost that the other legs had already shed (app/recall/recall.sql,
[concept names]). This index leads with the name and keeps the namespace second, so one lookup per
name finds its concepts within the scope's range of namespace ids.

Built CONCURRENTLY, alone in autocommit: a big table keeps taking writes meanwhile.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS concepts_name_namespace_idx "
            "ON concepts (name, namespace_id)"
        )


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS concepts_name_namespace_idx")
