"""`memoria bench capture`: what the capture and SessionStart hooks cost a Claude Code session.

One `memoria serve` on a scratch database, one user, one namespace holding a corpus (a few pinned).
Three questions, each measured from the outside, as Claude Code sees it:

- **capture hook**: the `scripts/memoria-hook capture` process (what Stop / PreCompact / SessionEnd
  run) on a 200-exchange transcript delta, in its default mode (check the event, hand it to a
  detached worker that spools, advances the cursor and sends, exit): spawn to exit is what Claude
  Code waits for. Each run gets a fresh client state folder (so a fresh cursor and spool) and a
  transcript of its own session, so every run sends all its exchanges. Also timed: from the spawn
  until every exchange of the run is stored as an episode on the server (the detached worker's
  work), and until every episode has its embedding (the durable embedding job), both read off the
  database;
- **SessionStart**: the `scripts/memoria-hook session-start` process end to end, spawn to exit,
  with its answer (the namespace's pinned and important memories); and the route alone;
- **UserPromptSubmit**: the hook endpoint (and the command hook process), by the function behind
  `memoria bench hook` (`memoria_bench.hook_latency`), handed in by the command.

Transcripts are synthesised in Claude Code's JSONL shape (`transcript`); the run is `run`.

Each measure starts with the server idle (no embedding or graph job due), so none pays for the
previous one's background work; the hooks run with bytecode caching on, as on a user's machine.
"""

from memoria_bench.capture.run import COLUMNS, NAMESPACE, CaptureBenchOptions, bench_capture, print_report
from memoria_bench.capture.transcript import synthetic_transcript

__all__ = [
    "COLUMNS",
    "NAMESPACE",
    "CaptureBenchOptions",
    "bench_capture",
    "print_report",
    "synthetic_transcript",
]
