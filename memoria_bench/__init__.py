"""Benchmarks that print figures: recall quality on LoCoMo-format data, and latency at scale."""
