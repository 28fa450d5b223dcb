"""How many candidates the HNSW walk keeps (`hnsw.ef_search`), from the size of the table.

The walk's recall at a given list length falls as the graph grows: more nodes lie between the entry
point and a query's neighbours, and a short list settles on a local optimum more often. Measured
with the index built at `ef_construction` 128 and legs of 30 candidates (README, "Speed"): in a
50k-memory scope of a 100k-memory table, 100 candidates gave the dense leg a recall@10 of 0.99 to
0.994, as good as 200 within the intervals, and made the every-leg statement 1.5 ms faster; in a
500k scope of a million, 100 gave 0.978 on the latency bench's 300 questions (one question found
none of its ten) where 200 gave 0.989. So the list is `ef_search` up to `ef_search_grows_above`
rows and grows by `ef_search_per_tenfold` for each tenfold beyond: 100 up to 100k rows, 200 at a
million, 300 at ten million.

The table's size is the planner's estimate (`pg_class.reltuples`), which `ScopeSizes` reads anyway
and keeps for `scope_size_ttl_s`; deleted rows count, since the walk passes them too.
"""

from __future__ import annotations

import math

from app.recall.settings import RecallSettings

EF_SEARCH_CEILING = 1000
"""pgvector refuses a larger `hnsw.ef_search`."""


def ef_search_for(table_rows: int, settings: RecallSettings) -> int:
    """The candidate list for a walk over a table of `table_rows` rows."""
    if settings.ef_search_per_tenfold <= 0 or table_rows <= settings.ef_search_grows_above:
        return settings.ef_search
    tenfolds = math.log10(table_rows / settings.ef_search_grows_above)
    return min(EF_SEARCH_CEILING, round(settings.ef_search + settings.ef_search_per_tenfold * tenfolds))
