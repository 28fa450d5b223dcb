"""`memoria bench usage`: what reaches the model after many sessions of real use.

A scenario (`scenario`; the dev ones in `scenarios/`) scripts many Claude Code sessions in two
projects: facts said in passing, facts that change later, everyday noise (greetings, "run the
tests", API errors, refused tools, the same unanswered question again), then new sessions that ask
questions whose answer is a labelled fact version, and prompts unrelated to the project. The bench
installs Memoria's hooks with the project's own installer into a scratch HOME and replays every
session through the command lines that installer wrote, as Claude Code runs them (`hooks`,
`replay`), against a real `memoria serve` with the local embedder on a scratch database; the
transcripts are written in Claude Code's shape (`transcript`), so capture's skip rules and folding
see what they see in use. Then it measures the injected contexts against the labels (`metrics`)
and reads the automatic supersede links (`links`). No model is involved: the replies are scripted.
"""

from memoria_bench.usage.run import SCENARIOS_DIR, UsageOptions, bench_usage, print_report
from memoria_bench.usage.scenario import Scenario, ScenarioError, load_scenario

__all__ = [
    "SCENARIOS_DIR",
    "Scenario",
    "ScenarioError",
    "UsageOptions",
    "bench_usage",
    "load_scenario",
    "print_report",
]
