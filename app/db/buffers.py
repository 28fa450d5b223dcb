"""How much `shared_buffers` the embedded server gets when the setting says `auto`: enough to hold
its data, within what the machine can spare.

- **Enough for the data.** A quarter more than the relation files under `base/` when it starts (room
  to grow until the next start, which sizes them again), and never under 512MB. Buffers that hold
  less than the table and its HNSW index decide recall's tail latency at a million memories.
- **No more than that.** Buffers far bigger than the data cost time too: recall was slower with
  buffers many times the data than with buffers just holding it (likely the buffer table that every
  page access searches, which grows with the buffers). The measurements: docs/benchmarks/.
- **Within the machine.** At most a quarter of the memory this process may use (the machine's, or a
  cgroup's limit when lower: a container, a systemd slice), the usual ceiling for PostgreSQL and
  what the Terraform deploy sizes its pods' buffers by; at most 8GB; at least 128MB.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

AUTO = "auto"
MB = 1024**2
FLOOR_BYTES = 512 * MB  # the fixed default before `auto`: holds everything up to ~100k memories
GROWTH = 1.25
MIN_BYTES = 128 * MB
MAX_BYTES = 8 * 1024**3
#: cgroup v2, then v1: the limit of the cgroup this process sees as its root (a container's own).
CGROUP_LIMIT_FILES = (Path("/sys/fs/cgroup/memory.max"), Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"))


def shared_buffers(setting: str, data_bytes: int, memory_bytes: int | None = None) -> str:
    """The `shared_buffers` value to write: `setting` itself unless it is `auto`; then sized for
    `data_bytes` of relation files within `memory_bytes` (default: `usable_memory_bytes()`), in MB."""
    if setting != AUTO:
        return setting
    memory = usable_memory_bytes() if memory_bytes is None else memory_bytes
    ceiling = max(min(memory // 4, MAX_BYTES), MIN_BYTES)
    wanted = max(int(data_bytes * GROWTH), FLOOR_BYTES)
    return f"{min(wanted, ceiling) // MB}MB"


def relation_bytes(pgdata: Path) -> int:
    """The size of every database's relation files (`base/`): tables, indexes, TOAST."""
    total = 0
    for root, _dirs, files in os.walk(pgdata / "base"):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_size
            except OSError:  # dropped while we walk
                continue
    return total


def usable_memory_bytes(limit_files: Sequence[Path] = CGROUP_LIMIT_FILES) -> int:
    """The machine's physical memory, or the cgroup's memory limit when that is lower."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for path in limit_files:
        try:
            text = path.read_text().strip()
        except OSError:
            continue
        if text.isdigit():  # "max" (v2) means no limit; v1 writes a huge number instead
            memory = min(memory, int(text))
    return memory
