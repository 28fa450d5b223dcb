"""`memoria bench ingest`: batched store throughput over real HTTP with the graph on, and where the
time goes.

Synthetic memories from the persona sentences (`memoria_bench.corpus`) are POSTed in batches to a
`memoria serve` process on a scratch database, a fixed number of requests in flight (`load`). The
server runs with its defaults (the concept graph on) and `Server-Timing`, so every answer says how
its time split between authentication, preparation, the duplicate lookup, embedding and the INSERT
transaction (`split`); the jobs table is read all along (`jobs`) for the moment the durable jobs the
stores enqueued (concept indexing, term counting) are all done, the end-to-end rate, and for how
long the worker pool ran them, the graph's share. `run` puts it together; `report` prints it.
"""

from memoria_bench.ingest.options import TARGET_PER_S, IngestOptions
from memoria_bench.ingest.report import print_report
from memoria_bench.ingest.run import bench_ingest

__all__ = ["TARGET_PER_S", "IngestOptions", "bench_ingest", "print_report"]
