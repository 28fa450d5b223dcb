"""Kill the embedded PostgreSQL once, and read from the samples how the service came through it."""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence
from pathlib import Path

from memoria_bench.soak.load import RECALL, STORE, Sample


def kill_postmaster(data_dir: Path) -> int:
    """kill -9 the postmaster of `data_dir` (its pid is the first line of postmaster.pid)."""
    pid = int((data_dir / "postmaster.pid").read_text().splitlines()[0])
    os.kill(pid, signal.SIGKILL)
    return pid


def ok(sample: Sample) -> bool:
    return sample.status in (200, 201)


def outage(samples: Sequence[Sample], kill_at_s: float) -> dict[str, float | int | None]:
    """The outage starts at the kill and ends when a store and a recall have both succeeded again.

    "Again" means a request sent after the first failure the kill caused: requests already in flight
    at the kill may still succeed a moment later, before the database's end reaches the pool, and are
    not a recovery. Errors before the kill or after that recovery are errors outside the outage (the
    target is 0); `recovery_s` is None when the service never came back before the run ended.
    """
    after = sorted((s for s in samples if s.at_s >= kill_at_s), key=lambda s: s.at_s)
    failed_from = next((s.at_s for s in after if not ok(s)), kill_at_s)
    back: dict[str, float] = {}
    for sample in after:
        sent_at = sample.at_s - sample.ms / 1000.0
        if ok(sample) and sent_at >= failed_from and sample.op not in back:
            back[sample.op] = sample.at_s
    recovered_at = max(back.values()) if len(back) == 2 else None
    inside = [s for s in samples if not ok(s) and kill_at_s <= s.at_s <= (recovered_at or float("inf"))]
    outside = [s for s in samples if not ok(s) and s not in inside]
    return {
        "kill_at_s": round(kill_at_s, 1),
        "recovery_s": None if recovered_at is None else round(recovered_at - kill_at_s, 2),
        "errors_during_outage": len(inside),
        "errors_outside_outage": len(outside),
        "store_back_after_s": _after(back.get(STORE), kill_at_s),
        "recall_back_after_s": _after(back.get(RECALL), kill_at_s),
    }


def _after(at_s: float | None, kill_at_s: float) -> float | None:
    return None if at_s is None else round(at_s - kill_at_s, 2)
