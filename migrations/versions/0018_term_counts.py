"""Term rarity for the lexical leg: per-namespace document frequencies of lexemes (issue #38).

`ts_rank` knows nothing of how common a word is in the scope; recall weighs each query lexeme by
its rarity (app/recall/recall.sql, `lexical_idf`), which needs, per namespace, how many memories
count and how many of them hold each lexeme. Reading that from `memories` at every recall would be
a scan per query; these tables keep it instead, brought up to date by a durable job
(app/recall/term_counts.py):

- `term_counts` (lexeme, namespace) -> memories holding the lexeme;
- `namespace_terms` namespace -> memories counted (live, not sensitive: the statistics of a shared
  namespace must not tell a grantee which words the owner's sensitive memories hold);
- `memory_terms` memory -> the namespace and lexemes it is counted with: what a change must take
  back, since the memory's row no longer holds them once changed.

Every change of what a memory is counted with (its search vector, namespace, deletion or
sensitivity) enqueues the job from a trigger, in the transaction of the change: the write paths
are many (store, update, delete, restore, namespace merge, redaction scan, episode expiry, SQL by
hand) and none can forget it. A purge cannot leave a job (the job's row cascades away with the
memory's), so the DELETE trigger takes the memory's counts back itself, in the purge's
transaction. The counts live apart from `namespaces`, whose row the graph writers update: the job
would otherwise wait on a purge's namespace row while holding the lock that purge waits for.

The backfill counts every memory there is, in this transaction, under a lock that holds writes
back meanwhile (a store of 100k memories takes seconds); the trigger is created first, so no
change falls between the two.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-28
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The job kind (app/recall/term_counts.py: TERM_COUNT_JOB) and the advisory lock key base of a
# namespace's counts (TERM_LOCK_BASE, 'mt' << 48).
JOB = "recall.term_counts"
LOCK_BASE = 0x6D74 << 48


def upgrade() -> None:
    op.execute("LOCK TABLE memories IN SHARE ROW EXCLUSIVE MODE")
    op.execute("""
        CREATE TABLE namespace_terms (
            namespace_id bigint PRIMARY KEY REFERENCES namespaces (id) ON DELETE CASCADE,
            memories integer NOT NULL
        )
    """)
    op.execute("""
        CREATE TABLE term_counts (
            lexeme text NOT NULL,
            namespace_id bigint NOT NULL REFERENCES namespaces (id) ON DELETE CASCADE,
            memories integer NOT NULL,
            PRIMARY KEY (lexeme, namespace_id)
        )
    """)
    op.execute("CREATE INDEX term_counts_namespace_idx ON term_counts (namespace_id)")
    # no foreign key to memories: a purge takes the counts back before the row goes (the trigger)
    op.execute("""
        CREATE TABLE memory_terms (
            memory_id bigint PRIMARY KEY,
            namespace_id bigint NOT NULL REFERENCES namespaces (id) ON DELETE CASCADE,
            lexemes text[] NOT NULL
        )
    """)
    op.execute("CREATE INDEX memory_terms_namespace_idx ON memory_terms (namespace_id)")

    # A memory stored live and not sensitive is to be counted.
    op.execute(f"""
        CREATE FUNCTION memoria_count_terms_of_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO jobs (kind, memory_id)
            SELECT '{JOB}', added.id FROM added WHERE added.deleted_at IS NULL AND NOT added.is_sensitive;
            RETURN NULL;
        END $$
    """)
    op.execute("""
        CREATE TRIGGER memories_count_terms_of_inserted AFTER INSERT ON memories
        REFERENCING NEW TABLE AS added FOR EACH STATEMENT
        EXECUTE FUNCTION memoria_count_terms_of_inserted()
    """)
    # A change of what it is counted with: the job counts it anew (or no longer).
    op.execute(f"""
        CREATE FUNCTION memoria_count_terms_of_updated() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO jobs (kind, memory_id) VALUES ('{JOB}', NEW.id);
            RETURN NULL;
        END $$
    """)
    op.execute("""
        CREATE TRIGGER memories_count_terms_of_updated
        AFTER UPDATE OF search_vector, namespace_id, deleted_at, is_sensitive ON memories
        FOR EACH ROW
        WHEN (OLD.search_vector IS DISTINCT FROM NEW.search_vector
              OR OLD.namespace_id <> NEW.namespace_id
              OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL)
              OR OLD.is_sensitive <> NEW.is_sensitive)
        EXECUTE FUNCTION memoria_count_terms_of_updated()
    """)
    # A purged memory's counts go with it, under the count locks (in namespace order, as the job
    # takes them) of the namespace it was in and the one it is counted in: a job counting it right
    # now holds the former, and its count is read only once that job has committed. A lexeme no
    # memory holds any more loses its row.
    op.execute(f"""
        CREATE FUNCTION memoria_uncount_terms_of_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            emptied text[];
            emptied_namespaces bigint[];
        BEGIN
            PERFORM pg_advisory_xact_lock({LOCK_BASE}::bigint + s.namespace_id)
            FROM (
                SELECT r.namespace_id FROM removed r
                UNION
                SELECT t.namespace_id FROM memory_terms t JOIN removed r ON r.id = t.memory_id
                ORDER BY 1
            ) s;
            WITH gone AS (
                DELETE FROM memory_terms t USING removed r WHERE t.memory_id = r.id
                RETURNING t.namespace_id, t.lexemes
            ),
            documents AS (
                UPDATE namespace_terms n SET memories = n.memories - d.memories
                FROM (SELECT namespace_id, count(*) AS memories FROM gone GROUP BY 1) d
                WHERE n.namespace_id = d.namespace_id
            ),
            terms AS (
                UPDATE term_counts c SET memories = c.memories - d.memories
                FROM (
                    SELECT g.namespace_id, l.lexeme, count(*) AS memories
                    FROM gone g, unnest(g.lexemes) AS l (lexeme)
                    GROUP BY 1, 2
                ) d
                WHERE c.lexeme = d.lexeme AND c.namespace_id = d.namespace_id
                RETURNING c.lexeme, c.namespace_id, c.memories
            )
            SELECT array_agg(lexeme), array_agg(namespace_id) INTO emptied, emptied_namespaces
            FROM terms WHERE memories <= 0;
            DELETE FROM term_counts c
            USING unnest(emptied, emptied_namespaces) AS e (lexeme, namespace_id)
            WHERE c.lexeme = e.lexeme AND c.namespace_id = e.namespace_id AND c.memories <= 0;
            RETURN NULL;
        END $$
    """)
    op.execute("""
        CREATE TRIGGER memories_uncount_terms_of_deleted AFTER DELETE ON memories
        REFERENCING OLD TABLE AS removed FOR EACH STATEMENT
        EXECUTE FUNCTION memoria_uncount_terms_of_deleted()
    """)

    # The backfill: every memory counted as the job would count it.
    op.execute("""
        INSERT INTO memory_terms (memory_id, namespace_id, lexemes)
        SELECT id, namespace_id, tsvector_to_array(search_vector)
        FROM memories
        WHERE deleted_at IS NULL AND NOT is_sensitive
    """)
    op.execute("""
        INSERT INTO namespace_terms (namespace_id, memories)
        SELECT namespace_id, count(*) FROM memory_terms GROUP BY 1
    """)
    op.execute("""
        INSERT INTO term_counts (lexeme, namespace_id, memories)
        SELECT l.lexeme, t.namespace_id, count(*)
        FROM memory_terms t, unnest(t.lexemes) AS l (lexeme)
        GROUP BY 1, 2
    """)


def downgrade() -> None:
    op.execute("DROP TRIGGER memories_uncount_terms_of_deleted ON memories")
    op.execute("DROP TRIGGER memories_count_terms_of_updated ON memories")
    op.execute("DROP TRIGGER memories_count_terms_of_inserted ON memories")
    op.execute("DROP FUNCTION memoria_uncount_terms_of_deleted()")
    op.execute("DROP FUNCTION memoria_count_terms_of_updated()")
    op.execute("DROP FUNCTION memoria_count_terms_of_inserted()")
    op.execute(f"DELETE FROM jobs WHERE kind = '{JOB}'")
    op.execute("DROP TABLE memory_terms")
    op.execute("DROP TABLE term_counts")
    op.execute("DROP TABLE namespace_terms")
