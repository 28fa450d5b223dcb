"""`memoria bench inference`: what one tenant can learn about another from the API's side channels.

Two users on one real `memoria serve`: B's memories hold a made-up word, A's do not. A times its
own recall of a query with that word against the same query with words nobody has (the shared text
index's posting lists and the table-wide lexeme statistics are not per tenant, so B's writing can
move A's latency), and reads the ids it gets back before and after B stores (a global sequence
counts everyone's writes). The core (`probe`) runs over any HTTP client; `run` brings up the
scratch database and server; `report` prints.
"""

from memoria_bench.inference.options import InferenceOptions
from memoria_bench.inference.probe import Tenant, probe
from memoria_bench.inference.report import print_report
from memoria_bench.inference.run import bench_inference

__all__ = ["InferenceOptions", "Tenant", "bench_inference", "print_report", "probe"]
