"""`memoria bench session --agent X`: what Memoria's hooks add to a whole session of a coding agent,
measured with the agent's real CLI (issue #37's target: at most 150 ms over no hooks).

A session is the CLI's headless run on one prompt, process start to exit: its SessionStart hook,
its prompt hook, the model's answer (a fake model API on 127.0.0.1 answering at once, so the
model's own time does not drown the hooks'), and its capture hook at the end. Two HOMEs hold the
same settings of the person's own; one also has `memoria hook install --agent X`. Both arms talk to
the same real `memoria serve` (its own embedded PostgreSQL, a pinned memory and a few notes to
recall, so the hooked sessions carry context as a person's do), and run interleaved round by round
on the same prompt. The report gives each arm's median and p95, the added time, and a bootstrap
interval of the median's difference (`memoria_bench.session.stats`); `--json` feeds
`memoria bench report`.
"""

from memoria_bench.session.agents import SESSION_CLIS
from memoria_bench.session.run import SessionFailed, SessionOptions, bench_session, print_report

__all__ = ["SESSION_CLIS", "SessionFailed", "SessionOptions", "bench_session", "print_report"]
