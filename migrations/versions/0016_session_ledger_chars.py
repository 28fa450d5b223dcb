"""One context budget per hook session (issue #35): the characters each ledger row cost.

`session_ledger.chars` is what injecting the row's memory added to the session's context: its line,
plus the answer's header and headings for the first row of an answer, so that a session's rows sum
to every character its hooks injected. The hook routes read that sum (the unexpired rows of the
session) against `MEMORIA_HOOKS__SESSION_MAX_CHARS` before they inject more. Rows written before
this migration cost 0: a session already under way is not cut short by its past.

A column with a constant default and a CHECK on a table of short-lived rows: instant (no rewrite;
the CHECK scans rows that live a day at most).

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "ALTER TABLE session_ledger ADD COLUMN chars integer NOT NULL DEFAULT 0 "
        "CONSTRAINT session_ledger_chars_check CHECK (chars >= 0)"
    )


def downgrade() -> None:
    op.execute("ALTER TABLE session_ledger DROP COLUMN chars")
