"""SQL of the sealed originals (`memory_secrets`), kept in one place.

The table has no user column: callers reach it through a memory they have already checked belongs
to the caller, and deleting (purging) a memory cascades its sealed originals away.
"""

SEALED_COLUMNS = "memory_id, ordinal, kind, key_id, nonce, ciphertext"

# $1..$6: parallel arrays, one element per row (one round trip for a whole memory or batch).
INSERT_SEALED = f"""
INSERT INTO memory_secrets ({SEALED_COLUMNS})
SELECT * FROM unnest($1::bigint[], $2::integer[], $3::text[], $4::text[], $5::bytea[], $6::bytea[])
"""

SELECT_SEALED = f"""
SELECT {SEALED_COLUMNS} FROM memory_secrets WHERE memory_id = $1 ORDER BY ordinal
"""

# After an edit: drop the originals whose placeholder number ($2) the memory no longer holds.
DELETE_SEALED_EXCEPT = """
DELETE FROM memory_secrets WHERE memory_id = $1 AND NOT (ordinal = ANY($2::integer[]))
"""

COUNT_BY_KEY = "SELECT key_id, count(*) AS n FROM memory_secrets GROUP BY key_id ORDER BY key_id"

# Rotation: the next batch not under the active key ($1) after the cursor ($2, $3), locked for the
# batch's transaction so an edit of the same memory waits instead of interleaving.
NEXT_TO_ROTATE = f"""
SELECT {SEALED_COLUMNS}
FROM memory_secrets
WHERE key_id <> $1 AND (memory_id, ordinal) > ($2, $3)
ORDER BY memory_id, ordinal
LIMIT $4
FOR UPDATE
"""

# $1..$5: parallel arrays of the re-sealed rows.
RESEAL = """
UPDATE memory_secrets AS s
SET key_id = v.key_id, nonce = v.nonce, ciphertext = v.ciphertext
FROM unnest($1::bigint[], $2::integer[], $3::text[], $4::bytea[], $5::bytea[])
    AS v (memory_id, ordinal, key_id, nonce, ciphertext)
WHERE s.memory_id = v.memory_id AND s.ordinal = v.ordinal
"""
