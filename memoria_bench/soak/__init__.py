"""`memoria bench soak`: a bounded mixed load on a real `memoria serve`, minute by minute.

Clients store (a share of requests, so the corpus grows) and recall (the rest) against a server that
owns its embedded PostgreSQL, as `make run` does. Every minute it prints p50/p95 per operation, the
errors and the server's resident memory; at the end, whether every acknowledged store is there, how
much the server grew after its warm-up and, when PostgreSQL was killed on purpose
(`--kill-postgres-at`), how long the service took to recover and whether any error fell outside the
outage.
"""

from memoria_bench.soak.options import SoakOptions
from memoria_bench.soak.report import print_summary
from memoria_bench.soak.run import bench_soak

__all__ = ["SoakOptions", "bench_soak", "print_summary"]
