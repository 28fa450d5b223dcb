"""`memoria bench secrets`: credential detection on a seeded corpus of credentials and look-alikes."""

from memoria_bench.secrets.alphabet import Case
from memoria_bench.secrets.corpus import Corpus, build_corpus
from memoria_bench.secrets.run import SecretsBenchOptions, bench_secrets, print_report

__all__ = ["Case", "Corpus", "SecretsBenchOptions", "bench_secrets", "build_corpus", "print_report"]
