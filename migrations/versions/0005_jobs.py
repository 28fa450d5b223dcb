"""Durable background jobs: the `jobs` table the worker pool claims from.

After-commit work (concept indexing, embedding a memory stored while the provider was down) used to
be an in-process task that a crash lost. Now it is a row written in the same transaction as the
memory; a worker claims it (`FOR UPDATE SKIP LOCKED`), runs it and deletes it in the transaction of
its work. `state` is `queued` (waiting for `run_after`), `running` (leased until `leased_until`) or
`failed` (out of attempts, kept with `last_error` as the record). A job is about one memory: purging
the memory cascades its jobs away.

The indexes are built with the table, in this transaction: the table is new and empty, so there is
nothing to build concurrently with.

- `jobs_due_idx`: the claim's scan of due jobs, oldest first.
- `jobs_leased_idx`: leases that ran out (a worker died), requeued now and then and at start-up.
- `jobs_memory_idx`: the cascade from `memories` and the completion of a memory's jobs by kind.

Memories stored before this revision whose concept indexing was lost (no links) get an indexing job
once, so the first worker repairs them without a `memoria graph rebuild`.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE jobs (
            id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            kind         text NOT NULL CHECK (char_length(kind) BETWEEN 1 AND 64),
            memory_id    bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            state        text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'failed')),
            attempts     integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
            run_after    timestamptz NOT NULL DEFAULT now(),
            leased_until timestamptz,
            last_error   text,
            created_at   timestamptz NOT NULL DEFAULT now(),
            updated_at   timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT jobs_leased_while_running CHECK ((state = 'running') = (leased_until IS NOT NULL))
        )
        """
    )
    op.execute("CREATE INDEX jobs_due_idx ON jobs (run_after, id) WHERE state = 'queued'")
    op.execute("CREATE INDEX jobs_leased_idx ON jobs (leased_until) WHERE state = 'running'")
    op.execute("CREATE INDEX jobs_memory_idx ON jobs (memory_id, kind)")
    op.execute(
        """
        INSERT INTO jobs (kind, memory_id)
        SELECT 'graph.index', m.id
        FROM memories m
        WHERE m.deleted_at IS NULL AND NOT m.is_sensitive
          AND NOT EXISTS (SELECT 1 FROM memory_concepts mc WHERE mc.memory_id = m.id)
        ORDER BY m.id
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE jobs")
