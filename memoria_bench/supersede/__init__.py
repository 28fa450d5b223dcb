"""`memoria bench supersede`: the automatic supersede rule (app.links.supersede_rule) on labelled pairs."""

from memoria_bench.supersede.run import DEV_PAIRS, Pair, bench_supersede, load_pairs, print_report

__all__ = ["DEV_PAIRS", "Pair", "bench_supersede", "load_pairs", "print_report"]
