"""SQL of namespace lookup and sharing. A namespace belongs to one user; a share lets another user
read it (`read`) or read and write it (`write`). Its owner calls it by its name, a grantee by its
address `@owner/name`, the one way `shared_name` spells it. Which namespaces a user reaches, for
other domains' queries, are fragments in fragments.sql beside this module."""


def shared_name(owner: str, namespace: str) -> str:
    """SQL for a shared namespace's address, from an owner's name column and a namespace's name column."""
    return f"'@' || {owner} || '/' || {namespace}"


OWN_NAMESPACES = """
SELECT name, id FROM namespaces
WHERE user_id = $1 AND ($2::text[] IS NULL OR name = ANY($2::text[]))
ORDER BY id
"""

CREATE_NAMESPACES = """
INSERT INTO namespaces (user_id, name) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING
"""

# One namespace creator per user at a time (a transaction-scoped advisory lock; the key's first
# half names this lock among the app's advisory locks), so that the count below and the insert after
# it see every namespace made before them: two writers creating the cap's last namespace and the
# one past it cannot both pass. The second half is the user id folded into an integer (two users
# sharing a key past 2^31 only wait for each other).
LOCK_USER_NAMESPACES = """
SELECT pg_advisory_xact_lock(hashtext('memoria.namespaces'), mod($1::bigint, 2147483648)::integer)
"""

# How many namespaces user $1 will hold once the names $2 exist: theirs that are not among $2, plus $2.
NAMESPACES_AFTER = """
SELECT count(*) + cardinality($2::text[]) FROM namespaces
WHERE user_id = $1 AND name <> ALL($2::text[])
"""

# The namespaces shared with user $1 among the (owner, name) pairs $2/$3, with the permission held.
SHARED_NAMESPACES = """
SELECT owner.name AS owner, shared.name, shared.id, share.permission
FROM namespace_shares share
JOIN namespaces shared ON shared.id = share.namespace_id
JOIN users owner ON owner.id = shared.user_id
WHERE share.grantee_id = $1
  AND (owner.name, shared.name) IN (SELECT * FROM unnest($2::text[], $3::text[]))
"""

# Counted per namespace on the live-memory index alone (memories_ns_hash_live_idx, an index-only scan):
# a join counting the table's rows would read all of it, which grows with every tenant's memories.
LIST_NAMESPACES = """
SELECT n.name, n.created_at,
       (SELECT count(*) FROM memories m WHERE m.namespace_id = n.id AND m.deleted_at IS NULL) AS memories
FROM namespaces n
WHERE n.user_id = $1
ORDER BY n.name
"""

# The web UI's overview of the user's own namespaces: live memories and episodes, concepts, and when
# the newest live item was added. Every figure comes from an index alone: the live items from
# memories_ns_hash_live_idx, the curated ones from memories_curated_rank_idx (episodes are the rest),
# the newest from memories_ns_created_idx. Counting and taking max(updated_at) over the table's rows
# instead would read every row of the namespace on each page load.
NAMESPACE_OVERVIEW = """
SELECT n.name, n.created_at, curated.n AS memories, live.n - curated.n AS episodes,
       newest.created_at AS last_added,
       (SELECT count(*) FROM concepts c WHERE c.namespace_id = n.id) AS concepts
FROM namespaces n
CROSS JOIN LATERAL (
    SELECT count(*) AS n FROM memories m WHERE m.namespace_id = n.id AND m.deleted_at IS NULL
) live
CROSS JOIN LATERAL (
    SELECT count(*) AS n FROM memories m
    WHERE m.namespace_id = n.id AND m.kind = 'memory' AND m.deleted_at IS NULL
) curated
LEFT JOIN LATERAL (
    SELECT m.created_at FROM memories m
    WHERE m.namespace_id = n.id AND m.deleted_at IS NULL
    ORDER BY m.created_at DESC, m.id DESC
    LIMIT 1
) newest ON true
WHERE n.user_id = $1
ORDER BY n.name
"""

USER_ID = "SELECT id FROM users WHERE name = $1"

OWN_NAMESPACE_ID = "SELECT id FROM namespaces WHERE user_id = $1 AND name = $2"

# A share changed to another permission keeps its creation time; `inserted` tells the two apart.
GRANT = """
INSERT INTO namespace_shares (namespace_id, grantee_id, permission)
VALUES ($1, $2, $3)
ON CONFLICT (namespace_id, grantee_id) DO UPDATE SET permission = EXCLUDED.permission
RETURNING created_at, (xmax = 0) AS inserted
"""

REVOKE = """
DELETE FROM namespace_shares share
USING namespaces shared, users grantee
WHERE shared.id = share.namespace_id AND grantee.id = share.grantee_id
  AND shared.user_id = $1 AND shared.name = $2 AND grantee.name = $3
RETURNING share.namespace_id
"""

SHARES_GRANTED = """
SELECT shared.name AS namespace, grantee.name AS grantee, share.permission, share.created_at
FROM namespace_shares share
JOIN namespaces shared ON shared.id = share.namespace_id
JOIN users grantee ON grantee.id = share.grantee_id
WHERE shared.user_id = $1
ORDER BY shared.name, grantee.name
"""

SHARES_RECEIVED = f"""
SELECT {shared_name("owner.name", "shared.name")} AS namespace, owner.name AS owner,
       share.permission, share.created_at
FROM namespace_shares share
JOIN namespaces shared ON shared.id = share.namespace_id
JOIN users owner ON owner.id = shared.user_id
WHERE share.grantee_id = $1
ORDER BY owner.name, shared.name
"""

# Renaming keeps the namespace's id, so its memories, links, concept graph and shares stay with it;
# the counts say what moved and whose address (`@owner/name`) changed.
RENAME_NAMESPACE = """
UPDATE namespaces SET name = $3
WHERE user_id = $1 AND name = $2
RETURNING
    (SELECT count(*) FROM memories m
     WHERE m.namespace_id = namespaces.id AND m.deleted_at IS NULL) AS memories,
    (SELECT count(*) FROM namespace_shares s WHERE s.namespace_id = namespaces.id) AS shares
"""
