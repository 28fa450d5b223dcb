"""Public ids (issue #16): the ids the API shows are random, not the global identity counter.

A memory's (and a concept's) `id` is a bigint identity shared by every tenant, so a tenant who
stores, waits and stores again saw how many memories everyone else stored in between. The API now
shows `public_id` instead: random in [1, 2^53) (an exact integer in JavaScript, so the web UI and
any JSON client read it unchanged), unique per table. The identity stays the primary key and
everything internal keeps using it (jobs, memory_concepts, memory_secrets, edges' evidence, the
HNSW/GIN indexes, and the newest-first order of memory_concepts, which relies on id order).

The value comes from `gen_random_uuid()` (PostgreSQL's strong random source): 56 of its random
bits, shifted down to 53. `random()` would not do: it is a PRNG whose state a tenant could recover
from the ids it is shown, and then predict everyone else's. A collision (a chance of about
rows / 2^53 per insert) fails the unique index; the store path retries it.

Written for a large live table, each step short or lock-light:
1. the column is added nullable with its default (both instant: a volatile default only applies to
   new rows when set after the column exists), so new rows get an id from then on;
2. existing rows are filled in batches of BATCH ids, each batch its own transaction;
3. the unique index is built CONCURRENTLY (alone, outside a transaction); a collision among the
   filled rows makes the build fail, and is then redrawn and the build retried;
4. NOT NULL through a CHECK added NOT VALID and validated (a scan that does not block writers),
   which lets SET NOT NULL skip its own scan under the exclusive lock; the range CHECK the same way.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24
"""

from collections.abc import Sequence

from alembic import op
from sqlalchemy import exc, text

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("memories", "concepts")
BATCH = 10_000
MAX_PUBLIC_ID = 2**53 - 1
INDEX_ATTEMPTS = 3


def upgrade() -> None:
    op.execute(
        """
        CREATE FUNCTION memoria_public_id() RETURNS bigint
        LANGUAGE sql VOLATILE PARALLEL SAFE
        RETURN greatest(
            1, ('x' || right(replace(gen_random_uuid()::text, '-', ''), 14))::bit(56)::bigint >> 3
        )
        """
    )
    op.execute(
        f"COMMENT ON FUNCTION memoria_public_id() IS "
        f"'A random id in [1, {MAX_PUBLIC_ID}] from the strong random source behind gen_random_uuid()'"
    )
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} ADD COLUMN public_id bigint")
        op.execute(f"ALTER TABLE {table} ALTER COLUMN public_id SET DEFAULT memoria_public_id()")
    for table in TABLES:
        _backfill(table)
        _unique_index(table)
        _not_null(table)


def _backfill(table: str) -> None:
    """Give every existing row a public id, BATCH ids per transaction, in primary-key order."""
    after = 0
    while True:
        with op.get_context().autocommit_block():
            last = (
                op.get_bind()
                .execute(
                    text(
                        f"""
                        WITH batch AS (
                            SELECT id FROM {table} WHERE id > :after ORDER BY id LIMIT :batch
                        ), filled AS (
                            UPDATE {table} t SET public_id = memoria_public_id()
                            FROM batch b WHERE t.id = b.id AND t.public_id IS NULL
                        )
                        SELECT max(id) FROM batch
                        """
                    ),
                    {"after": after, "batch": BATCH},
                )
                .scalar()
            )
        if last is None:
            return
        after = last


def _unique_index(table: str) -> None:
    """Build `<table>_public_id_key` without blocking writers; redraw colliding ids if it fails."""
    index = f"{table}_public_id_key"
    for attempt in range(INDEX_ATTEMPTS):
        with op.get_context().autocommit_block():
            # a failed build leaves an invalid index behind, which IF NOT EXISTS would keep
            op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {index}")
        try:
            with op.get_context().autocommit_block():
                op.execute(f"CREATE UNIQUE INDEX CONCURRENTLY {index} ON {table} (public_id)")
            return
        except exc.IntegrityError:
            if attempt == INDEX_ATTEMPTS - 1:
                raise
        with op.get_context().autocommit_block():
            op.execute(
                f"""
                UPDATE {table} SET public_id = memoria_public_id()
                WHERE id IN (
                    SELECT id FROM (
                        SELECT id, row_number() OVER (PARTITION BY public_id ORDER BY id) AS n FROM {table}
                    ) d WHERE n > 1
                )
                """
            )


def _not_null(table: str) -> None:
    """NOT NULL and the range, each proven by a scan that lets writers through (VALIDATE), so the
    exclusive lock of SET NOT NULL is held only for a catalog change."""
    with op.get_context().autocommit_block():
        # rows written between the backfill and the default taking effect cannot exist (SET DEFAULT
        # ran first), but a leftover would fail VALIDATE; fill it rather than fail
        op.execute(f"UPDATE {table} SET public_id = memoria_public_id() WHERE public_id IS NULL")
    op.execute(
        f"ALTER TABLE {table} ADD CONSTRAINT {table}_public_id_present "
        f"CHECK (public_id IS NOT NULL) NOT VALID"
    )
    op.execute(
        f"ALTER TABLE {table} ADD CONSTRAINT {table}_public_id_range "
        f"CHECK (public_id BETWEEN 1 AND {MAX_PUBLIC_ID}) NOT VALID"
    )
    with op.get_context().autocommit_block():
        op.execute(f"ALTER TABLE {table} VALIDATE CONSTRAINT {table}_public_id_present")
    with op.get_context().autocommit_block():
        op.execute(f"ALTER TABLE {table} VALIDATE CONSTRAINT {table}_public_id_range")
    op.execute(f"ALTER TABLE {table} ALTER COLUMN public_id SET NOT NULL")
    op.execute(f"ALTER TABLE {table} DROP CONSTRAINT {table}_public_id_present")


def downgrade() -> None:
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} DROP COLUMN public_id")
    op.execute("DROP FUNCTION memoria_public_id()")
