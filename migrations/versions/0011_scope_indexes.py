"""Two indexes that read one namespace without reading the others' rows (issue #20).

Recall reads a small scope through per-namespace lookups instead of the HNSW and text indexes,
which would pass every other namespace's rows first. Both lookups went through the namespace index
and fetched one table page per memory: a namespace grows with everyone else's, so its rows lie
scattered (at 1M memories, 19.5k rows of one namespace sat on 18.5k of the table's 150k pages).

- memories_scope_vectors_idx holds each live memory's vector under its namespace, with every
  column the dense leg's unfiltered exact scan reads, so that scan is an index-only scan over a few
  thousand contiguous pages (36-48 ms before, 13 ms after, same namespace and query). It costs about
  the table's size again (872 MB at 1M memories of 384 dimensions) and one btree insert per stored
  memory. A btree entry holds at most ~2.7 KB, so it is made only for embeddings of up to 1,024
  dimensions (a 2 KB halfvec); wider ones keep reading the table, which finds the same rows.
- memories_scope_search_idx is the text index with one more lexeme per memory, its namespace's
  (`memoria_scope_lexeme`, with a space no parsed word has). A lexical tier asks it for "any of
  these words AND this namespace's lexeme", and GIN walks the namespace's short posting list,
  skipping through the long lists of common words instead of reading them whole. The text index
  ANDed with the namespace index read every row a common word matches (359k for "like | would |
  one | pet"): 174 ms before, 17 ms after. 33 MB at 1M memories.

Built CONCURRENTLY, each alone in autocommit: a big table keeps taking writes meanwhile.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-25
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MAX_COVERED_DIMENSION = 1024


def upgrade() -> None:
    op.execute(
        """
        CREATE FUNCTION memoria_scope_lexeme(namespace_id bigint) RETURNS text
        LANGUAGE sql IMMUTABLE PARALLEL SAFE
        RETURN 'namespace ' || namespace_id
        """
    )
    op.execute(
        """
        CREATE FUNCTION memoria_scope_search(namespace_id bigint, search_vector tsvector) RETURNS tsvector
        LANGUAGE sql IMMUTABLE PARALLEL SAFE
        RETURN search_vector || array_to_tsvector(ARRAY[memoria_scope_lexeme(namespace_id)])
        """
    )
    op.execute(
        """
        CREATE FUNCTION memoria_scope_query(namespace_id bigint, query tsquery) RETURNS tsquery
        LANGUAGE sql IMMUTABLE PARALLEL SAFE
        RETURN query && quote_literal(memoria_scope_lexeme(namespace_id))::tsquery
        """
    )
    with op.get_context().autocommit_block():
        op.execute(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS memories_scope_search_idx "
            "ON memories USING gin (memoria_scope_search(namespace_id, search_vector)) "
            "WHERE deleted_at IS NULL"
        )
    # the dimension the table was made with (0001 records it), not the one configured now
    dimension = (
        op.get_bind()
        .execute(sa.text("SELECT value::int FROM memoria_meta WHERE key = 'embedding_dimension'"))
        .scalar_one()
    )
    if dimension > MAX_COVERED_DIMENSION:
        return
    with op.get_context().autocommit_block():
        op.execute(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS memories_scope_vectors_idx "
            "ON memories (namespace_id) INCLUDE (id, is_sensitive, embedding_model, embedding) "
            "WHERE deleted_at IS NULL AND embedding IS NOT NULL"
        )


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS memories_scope_vectors_idx")
    with op.get_context().autocommit_block():
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS memories_scope_search_idx")
    op.execute("DROP FUNCTION memoria_scope_query(bigint, tsquery)")
    op.execute("DROP FUNCTION memoria_scope_search(bigint, tsvector)")
    op.execute("DROP FUNCTION memoria_scope_lexeme(bigint)")
