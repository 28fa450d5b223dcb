"""`memoria bench latency`: recall latency and HNSW recall@10 on a large, realistic corpus.

The corpus goes in through the real store path (`load`: `MemoryService.store`, real MiniLM
embeddings, and with `--concepts` the store route's concept indexer), so the table, its GIN and HNSW
indexes and the planner statistics look like production's. Latency is measured three ways, because
each answers a different question:

- over real HTTP against a `memoria serve` process (`server`, `http`): what an agent sees, query
  embedding included;
- the recall statement alone (`sql`), timed by asyncpg around the one statement `RecallService`
  runs, with the service's own arguments: what the SQL costs;
- one query embedding in this process: how much of the HTTP figure is the model.

Beside them: the dense leg's HNSW recall@10 against exact search (`hnsw`), EXPLAIN ANALYZE per CTE
(`explain`), the issue's targets (`targets`) and the tables (`report`). The modes are `lexical`,
`lexical+dense` and `all` (`memoria_bench.modes`), alternated over the same texts (`schedule`).
"""

from memoria_bench.latency.options import DEFAULT_SENTENCES, LatencyOptions
from memoria_bench.latency.report import print_report
from memoria_bench.latency.run import bench_latency

__all__ = ["DEFAULT_SENTENCES", "LatencyOptions", "bench_latency", "print_report"]
