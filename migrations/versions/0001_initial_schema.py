"""Initial schema: users, API keys, namespaces, memories (FTS + halfvec/HNSW), concept graph.

The embedding dimension D is fixed here, taken from the configured embedder, and recorded in
`memoria_meta` so the service can refuse to start with an embedder of another width.

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

from collections.abc import Sequence

from alembic import op

from app.db.migrate import embedding_dimension_for_migration

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    dim = embedding_dimension_for_migration()
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.execute(
        """
        CREATE TABLE memoria_meta (
            key   text PRIMARY KEY,
            value text NOT NULL
        )
        """
    )
    op.execute(f"INSERT INTO memoria_meta (key, value) VALUES ('embedding_dimension', '{dim:d}')")

    op.execute(
        """
        CREATE TABLE users (
            id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            name       text NOT NULL UNIQUE CHECK (char_length(name) BETWEEN 1 AND 128),
            created_at timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    op.execute(
        """
        CREATE TABLE api_keys (
            id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            user_id    bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
            prefix     text NOT NULL,
            key_hash   bytea NOT NULL UNIQUE,
            label      text,
            created_at timestamptz NOT NULL DEFAULT now(),
            revoked_at timestamptz
        )
        """
    )
    op.execute("CREATE INDEX api_keys_user_idx ON api_keys (user_id)")
    op.execute(
        """
        CREATE TABLE namespaces (
            id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            user_id    bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
            name       text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
            created_at timestamptz NOT NULL DEFAULT now(),
            UNIQUE (user_id, name)
        )
        """
    )

    # array_to_string is only STABLE; a generated column needs an IMMUTABLE expression.
    op.execute(
        """
        CREATE FUNCTION memoria_tags_text(tags text[]) RETURNS text
        LANGUAGE sql IMMUTABLE PARALLEL SAFE
        RETURN coalesce(array_to_string(tags, ' '), '')
        """
    )
    op.execute(
        f"""
        CREATE TABLE memories (
            id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            namespace_id      bigint NOT NULL REFERENCES namespaces (id) ON DELETE CASCADE,
            content           text NOT NULL CHECK (char_length(content) BETWEEN 1 AND 100000),
            category          text CHECK (char_length(category) BETWEEN 1 AND 64),
            tags              text[] NOT NULL DEFAULT '{{}}',
            importance        real NOT NULL DEFAULT 0.5 CHECK (importance BETWEEN 0 AND 1),
            expanded_keywords text,
            is_sensitive      boolean NOT NULL DEFAULT false,
            source            text,
            metadata          jsonb NOT NULL DEFAULT '{{}}'::jsonb,
            content_hash      bytea NOT NULL,
            embedding         halfvec({dim:d}),
            embedding_model   text,
            created_at        timestamptz NOT NULL DEFAULT now(),
            updated_at        timestamptz NOT NULL DEFAULT now(),
            deleted_at        timestamptz,
            search_vector     tsvector GENERATED ALWAYS AS (
                setweight(to_tsvector('english'::regconfig, content), 'A')
                || setweight(to_tsvector('english'::regconfig, coalesce(expanded_keywords, '')), 'B')
                || setweight(to_tsvector('english'::regconfig, memoria_tags_text(tags)), 'C')
                || setweight(to_tsvector('english'::regconfig, coalesce(category, '')), 'D')
            ) STORED
        )
        """
    )
    op.execute("CREATE INDEX memories_search_idx ON memories USING gin (search_vector)")
    op.execute("CREATE INDEX memories_ns_created_idx ON memories (namespace_id, created_at DESC, id DESC)")
    op.execute(
        "CREATE UNIQUE INDEX memories_ns_hash_live_idx ON memories (namespace_id, content_hash) "
        "WHERE deleted_at IS NULL"
    )
    op.execute("CREATE INDEX memories_tags_idx ON memories USING gin (tags)")
    op.execute(
        "CREATE INDEX memories_unembedded_idx ON memories (id) WHERE embedding IS NULL AND deleted_at IS NULL"
    )

    op.execute(
        f"""
        CREATE TABLE concepts (
            id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            namespace_id bigint NOT NULL REFERENCES namespaces (id) ON DELETE CASCADE,
            name         text NOT NULL,
            display_name text NOT NULL,
            aliases      text[] NOT NULL DEFAULT '{{}}',
            kind         text,
            embedding    halfvec({dim:d}),
            doc_freq     integer NOT NULL DEFAULT 0,
            created_at   timestamptz NOT NULL DEFAULT now(),
            updated_at   timestamptz NOT NULL DEFAULT now(),
            UNIQUE (namespace_id, name)
        )
        """
    )
    op.execute("CREATE INDEX concepts_aliases_idx ON concepts USING gin (aliases)")
    op.execute(
        """
        CREATE TABLE memory_concepts (
            memory_id  bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            concept_id bigint NOT NULL REFERENCES concepts (id) ON DELETE CASCADE,
            weight     real NOT NULL DEFAULT 1,
            PRIMARY KEY (memory_id, concept_id)
        )
        """
    )
    op.execute("CREATE INDEX memory_concepts_concept_idx ON memory_concepts (concept_id)")
    op.execute(
        """
        CREATE TABLE concept_edges (
            id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            namespace_id        bigint NOT NULL REFERENCES namespaces (id) ON DELETE CASCADE,
            source_id           bigint NOT NULL REFERENCES concepts (id) ON DELETE CASCADE,
            target_id           bigint NOT NULL REFERENCES concepts (id) ON DELETE CASCADE,
            relation            text NOT NULL DEFAULT 'co_occurs',
            weight              real NOT NULL DEFAULT 1,
            evidence_memory_ids bigint[] NOT NULL DEFAULT '{}',
            valid_from          timestamptz NOT NULL DEFAULT now(),
            valid_to            timestamptz,
            CHECK (source_id <> target_id),
            UNIQUE (source_id, target_id, relation)
        )
        """
    )
    op.execute("CREATE INDEX concept_edges_target_idx ON concept_edges (target_id)")

    # CONCURRENTLY cannot run inside a transaction: it gets its own autocommit block.
    with op.get_context().autocommit_block():
        op.execute(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS memories_embedding_hnsw_idx "
            "ON memories USING hnsw (embedding halfvec_cosine_ops) WITH (m = 16, ef_construction = 64)"
        )


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute("DROP INDEX CONCURRENTLY IF EXISTS memories_embedding_hnsw_idx")
    op.execute("DROP TABLE concept_edges")
    op.execute("DROP TABLE memory_concepts")
    op.execute("DROP TABLE concepts")
    op.execute("DROP TABLE memories")
    op.execute("DROP FUNCTION memoria_tags_text(text[])")
    op.execute("DROP TABLE namespaces")
    op.execute("DROP TABLE api_keys")
    op.execute("DROP TABLE users")
    op.execute("DROP TABLE memoria_meta")
