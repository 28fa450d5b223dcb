"""The replica the read-replica tests use: the bench's (memoria_bench.standby), one piece of code."""

from memoria_bench.standby import Replica

__all__ = ["Replica"]
