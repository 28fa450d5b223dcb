"""The tables `memoria bench inference` prints."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table


def _quartile_row(label: str, q: dict[str, Any]) -> tuple[str, ...]:
    return (label, str(q["n"]), f"{q['q1']:.2f}", f"{q['median']:.2f}", f"{q['q3']:.2f}")


def print_report(report: dict[str, Any], console: Console) -> None:
    setup, timing, ids = report["setup"], report["timing"], report["ids"]
    table = Table(
        title=f"A's recall: query with {setup['word']!r} (in {setup['others_memories']:,} of B's memories) "
        f"vs words nobody has; A has {setup['own_memories']:,} memories"
    )
    for column in ("query word", "n", "q1 ms", "median ms", "q3 ms"):
        table.add_column(column, justify="left" if column == "query word" else "right")
    main, control = timing["word_vs_absent"], timing["absent_vs_control"]
    table.add_row(*_quartile_row(f"{setup['word']} (B has it)", main["a"]))
    table.add_row(*_quartile_row(f"{setup['absent_word']} (nobody)", main["b"]))
    table.add_row(*_quartile_row(f"{setup['control_word']} (nobody, control)", control["b"]))
    console.print(table)
    for name, result in (("word vs absent", main), ("absent vs control", control)):
        console.print(
            f"{name}: median difference {result['median_difference_ms']:+.2f} ms, interquartile ranges "
            f"{'overlap' if result['iqr_overlap'] else 'do NOT overlap'}, p = {result['p_value']:.2g} "
            f"({result['p_method']})"
        )
    console.print(f"B's memories in A's results: {timing['leaked']}")
    ids_table = Table(title="ids A sees around B's stores")
    for column in ("B stored between", "A's first id", "A's second id", "gap"):
        ids_table.add_column(column, justify="right")
    for trial in ids["trials"]:
        ids_table.add_row(
            str(trial["others_stored"]), str(trial["first_id"]), str(trial["second_id"]), str(trial["id_gap"])
        )
    console.print(ids_table)
    verdict = "reveal" if ids["reveals_others_activity"] else "do not reveal"
    console.print(f"ids {verdict} how many memories others stored in between")
