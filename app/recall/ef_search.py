"""How many candidates the HNSW walk keeps (`hnsw.ef_search`), from the size of the table.

The walk's recall at a given list length falls as the graph grows: more nodes lie between the entry
point and a query's neighbours, and a short list settles on a local optimum more often, while a
longer list costs every recall more. So the list is `ef_search` up to `ef_search_grows_above` rows
and grows by `ef_search_per_tenfold` for each tenfold beyond: with the defaults 100 up to 100k rows,
200 at a million, 300 at ten million. `memoria bench latency` reports the dense leg's recall@10
against exact search with the list it used (docs/benchmarks/).

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
