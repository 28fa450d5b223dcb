"""`memoria bench slow-clients`: a flood of slow-header sockets from one address against a real
`memoria serve`, and how fast other clients' health checks and recalls are answered meanwhile."""

from memoria_bench.slow_clients.run import SlowClientsOptions, bench_slow_clients, print_report

__all__ = ["SlowClientsOptions", "bench_slow_clients", "print_report"]
