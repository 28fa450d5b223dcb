-- The concept graph's rules for other queries (app/db/queries.py expands them): recall's graph leg
-- (app/recall/recall.sql) and the browse queries the routes and the web UI read (app/graph/browse.py).

-- fragment: association(together, df_a, df_b)
-- How strongly an edge ties two concepts, 0 to 1: the memories mentioning both (`together`, the
-- edge's weight) among those mentioning either (Jaccard), one memory added below the line so that
-- two concepts met once (both 1, together once: 0.5) weigh less than two met together every time of
-- many (5 of 5: 0.83), and a tie to a concept in many memories weighs little (1 of 1 and 10: 0.09).
-- Read from the counts the indexing job keeps (the edge's weight, each concept's doc_freq), so it
-- is never stale.
(together / (df_a + df_b - together + 1.0))
