-- Rules every domain's SQL states the same way, written once (app/db/queries.py expands them).

-- fragment: visible(m, include_sensitive)
-- A memory a reader may see: live (not in the trash) and not sensitive unless the reader asked
-- for sensitive ones. Every read path that answers memories to a reader (recall, session start,
-- list and export, get, graph browse) says it with this fragment, so hiding another class of
-- memory from all of them is one edit here. Only the columns named here may appear: recall's
-- exact dense scan reads memories_scope_vectors_idx alone (an index-only scan), which holds
-- is_sensitive and covers deleted_at by its predicate, and nothing else of the row.
m.deleted_at IS NULL
AND (m.is_sensitive = false OR include_sensitive)

-- fragment: visible_to(m, owned, include_sensitive)
-- `visible`, for a reader who may reach m through a share (`owned`: m's namespace is the reader's
-- own): a sensitive memory is its owner's alone, whatever a grantee asks for. Every path whose scope
-- may hold a namespace shared with the reader (recall, list and export, get, links, changes) says
-- it with this fragment (or `seen`), so no grantee ever reads, recalls or changes one.
{{ visible(m, owned AND include_sensitive) }}

-- fragment: seen(m, owned, include_sensitive, include_deleted)
-- `visible_to`, and the owner's trash for its owner alone when they ask for it (`include_deleted`).
-- A grantee never sees what the owner deleted, to read it or to change it: every path that takes
-- a memory id (get, change, delete, restore, purge, links) looks the memory up with this fragment,
-- so a memory in someone else's trash, or sensitive, answers as an id nobody has.
({{ visible_to(m, owned, include_sensitive) }}
 OR (owned AND include_deleted AND (m.is_sensitive = false OR include_sensitive)))

-- fragment: current(m, as_of)
-- A memory whose statement holds at `as_of` (a NULL timestamptz: now): valid from its `valid_from`
-- (or, without one, from when it was stored) and not yet past its `valid_to`. A supersede ends the
-- old memory's validity (app/links), so "current" is also "not superseded". Every read path that
-- answers memories to a reader applies it unless the reader asks for versions no longer current
-- (`include_superseded`); recall applies it once its hits are resolved to their newest version.
coalesce(m.valid_from, m.created_at) <= coalesce(as_of, now())
AND (m.valid_to IS NULL OR m.valid_to > coalesce(as_of, now()))
