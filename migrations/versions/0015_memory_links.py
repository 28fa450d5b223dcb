"""Typed links between memories and validity in time (issue #35).

- `memory_links`: `source_id` `kind` `target_id`, read "source supersedes target", "source is
  resolved by target", "source: see also target", "source is part of target". Both ends are
  memories of one namespace (the links service checks it); a link goes with either end's purge.
  `origin` says who made it: `user` (REST, MCP, CLI, UI, import) or `auto` (the supersede rule on
  store and capture, whose evidence is in `reason`).
- `memory_links_superseded_once`: a memory is superseded by at most one other, so a chain of
  versions has one head.
- `memory_links_target_idx`: recall resolves a superseded hit to its head by the target, and a
  memory's page lists the links that point at it.
- `target_valid_to_before`: a supersede ends the old memory's validity (`valid_to`); what it was
  before is kept here, so undoing the link, or deleting the newer memory, gives it back.
- `memories.valid_from` / `memories.valid_to`: when the memory's statement holds. NULL `valid_from`
  reads as the memory's `created_at`, NULL `valid_to` as "still holds". Both nullable and without a
  default: instant on a large live table.

A new, empty table and two nullable columns: everything in the migration's transaction.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE memories ADD COLUMN valid_from timestamptz")
    op.execute(
        "ALTER TABLE memories ADD COLUMN valid_to timestamptz CONSTRAINT memories_validity_check "
        "CHECK (valid_to IS NULL OR valid_from IS NULL OR valid_to >= valid_from)"
    )
    op.execute(
        """
        CREATE TABLE memory_links (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            source_id bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            target_id bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            kind text NOT NULL
                CONSTRAINT memory_links_kind_check
                CHECK (kind IN ('supersedes', 'resolved-by', 'see-also', 'part-of')),
            origin text NOT NULL DEFAULT 'user'
                CONSTRAINT memory_links_origin_check CHECK (origin IN ('user', 'auto')),
            reason text CONSTRAINT memory_links_reason_check CHECK (char_length(reason) <= 1000),
            target_valid_to_before timestamptz,
            created_at timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT memory_links_not_self CHECK (source_id <> target_id),
            CONSTRAINT memory_links_once UNIQUE (source_id, kind, target_id)
        )
        """
    )
    op.execute("CREATE INDEX memory_links_target_idx ON memory_links (target_id, kind)")
    op.execute(
        "CREATE UNIQUE INDEX memory_links_superseded_once "
        "ON memory_links (target_id) WHERE kind = 'supersedes'"
    )


def downgrade() -> None:
    op.execute("DROP TABLE memory_links")
    op.execute("ALTER TABLE memories DROP COLUMN valid_to")
    op.execute("ALTER TABLE memories DROP COLUMN valid_from")
