"""The per-session ledger (issue #35): what each hook session has already been given.

`session_ledger` holds one row per memory injected into one Claude Code session (SessionStart or
a prompt hook's recall), keyed by the caller, the session id the hook event carries and the
memory's internal id, so the hook routes inject a memory at most once per session. A row lives
`expires_at` (the hooks' `ledger_ttl_hours` after the injection); the episode expiry sweep
(`app.memories.expiry`) deletes rows past it. The memory's and the user's deletion take their
rows with them.

- `session_id` is bounded here as the routes bound it (`app.memories.ledger.MAX_SESSION_ID_CHARS`).
- `session_ledger_expires_at_idx`: the sweep's read, soonest expired first.

A new, empty table: created in the migration's transaction, no CONCURRENTLY needed.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE session_ledger (
            user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
            session_id text NOT NULL
                CONSTRAINT session_ledger_session_id_check
                CHECK (char_length(session_id) BETWEEN 1 AND 128),
            memory_id bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            injected_at timestamptz NOT NULL DEFAULT now(),
            expires_at timestamptz NOT NULL,
            PRIMARY KEY (user_id, session_id, memory_id)
        )
        """
    )
    op.execute("CREATE INDEX session_ledger_expires_at_idx ON session_ledger (expires_at)")
    # The memory's deletion (a purge, the expiry sweep) looks its ledger rows up by memory.
    op.execute("CREATE INDEX session_ledger_memory_idx ON session_ledger (memory_id)")


def downgrade() -> None:
    op.execute("DROP TABLE session_ledger")
