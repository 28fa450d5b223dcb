-- Which namespaces a user reaches, for other domains' queries (app/db/queries.py expands them).
-- A grantee calls a shared namespace by its address `@owner/name` (app/namespaces/sql.py's
-- `shared_name` spells the same in Python).

-- fragment: seen_namespaces(user)
-- A subquery: every namespace the user may read, named as that user calls it, with whether they
-- own it and whether they may change its memories. Own namespaces first, then those shared with
-- them; a user never holds a share of their own namespace, so each namespace appears once.
SELECT id, name, true AS owned, true AS writable FROM namespaces WHERE user_id = user
UNION ALL
SELECT shared.id, '@' || owner.name || '/' || shared.name, false, share.permission = 'write'
FROM namespace_shares share
JOIN namespaces shared ON shared.id = share.namespace_id
JOIN users owner ON owner.id = shared.user_id
WHERE share.grantee_id = user

-- fragment: writable_namespaces(user)
-- A subquery: the ids of the namespaces whose memories the user may change.
SELECT id FROM namespaces WHERE user_id = user
UNION ALL
SELECT namespace_id FROM namespace_shares WHERE grantee_id = user AND permission = 'write'
