"""`memoria bench secrets`: detection recall per kind, false positives, and the time redaction adds.

A credential counts as found only when one finding covers all of it: a redaction that leaves a
fragment behind is a miss. A look-alike counts as a false positive when anything in it is redacted.
Latency is per memory, what the store path adds: `redact` alone (the default, no key) and
`redact` + `Vault.seal` of what it found (with a key); each memory is timed `repeat` times and its
median kept, so a scheduler hiccup on a shared machine does not pass for the detector's cost. Two
sizes: the corpus sentences as they are, and memories of about 4,000 characters (the default
content limit) made of prose and look-alikes, half of them holding one credential.
"""

from __future__ import annotations

import os
import random
import statistics
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table
from scipy.stats import binomtest

from app.secrets import Detector, Vault, redact
from memoria_bench.secrets.alphabet import Case
from memoria_bench.secrets.corpus import Corpus, build_corpus, long_memory
from memoria_bench.secrets.dev_corpus import dev_corpus

TARGET_RECALL = 0.98
TARGET_FALSE_POSITIVES = 0.02
TARGET_P50_MS = 1.0


@dataclass(frozen=True, slots=True)
class SecretsBenchOptions:
    seed: int = 16
    secrets: int = 264
    lookalikes: int = 200
    long_memories: int = 200
    repeat: int = 5


def _found(case: Case, detector: Detector) -> tuple[bool, str | None]:
    """Whether one finding covers the whole credential, and the kind it was given."""
    for finding in redact(case.text, detector).findings:
        if finding.start <= case.start and finding.end >= case.end:
            return True, finding.kind
    return False, None


def _percentiles(samples_ms: list[float]) -> dict[str, float]:
    p50, p95, p99 = np.percentile(np.asarray(samples_ms), [50, 95, 99])
    return {
        "n": len(samples_ms),
        "p50": round(float(p50), 3),
        "p95": round(float(p95), 3),
        "p99": round(float(p99), 3),
        "max": round(max(samples_ms), 3),
    }


def _time_ms(texts: list[str], detector: Detector, vault: Vault | None, repeat: int) -> list[float]:
    """Per text, the median of `repeat` runs of what a store adds: redact (and seal, with a vault)."""
    out: list[float] = []
    for memory_id, text in enumerate(texts, start=1):
        runs: list[float] = []
        for _ in range(repeat):
            start = time.perf_counter_ns()
            redacted = redact(text, detector)
            if vault is not None:
                vault.seal(memory_id, redacted.secrets)
            runs.append((time.perf_counter_ns() - start) / 1e6)
        out.append(statistics.median(runs))
    return out


def _wilson(successes: int, trials: int) -> list[float]:
    """The 95% Wilson interval of a proportion: how far the figure can be from the true rate."""
    if trials == 0:
        return [0.0, 1.0]
    ci = binomtest(successes, trials).proportion_ci(confidence_level=0.95, method="wilson")
    return [round(float(ci.low), 4), round(float(ci.high), 4)]


def _score(corpus: Corpus, detector: Detector) -> dict[str, Any]:
    """Recall per kind and false positives per look-alike family of one corpus, with intervals."""
    per_kind: dict[str, Counter[str]] = {}
    misses: list[dict[str, str]] = []
    for case in corpus.secrets:
        assert case.kind is not None
        whole, kind = _found(case, detector)
        tally = per_kind.setdefault(case.kind, Counter())
        tally["total"] += 1
        tally["found"] += whole
        tally["same_kind"] += kind == case.kind
        if not whole:
            misses.append({"kind": case.kind, "text": case.text[:160]})

    per_family: dict[str, Counter[str]] = {}
    false_positives: list[dict[str, Any]] = []
    for case in corpus.lookalikes:
        findings = redact(case.text, detector).findings
        tally = per_family.setdefault(case.family, Counter())
        tally["total"] += 1
        tally["flagged"] += bool(findings)
        if findings:
            false_positives.append(
                {"family": case.family, "text": case.text[:160], "kinds": [f.kind for f in findings]}
            )
    found = sum(t["found"] for t in per_kind.values())
    flagged = sum(t["flagged"] for t in per_family.values())
    return {
        "secrets": len(corpus.secrets),
        "kinds": len(per_kind),
        "lookalikes": len(corpus.lookalikes),
        "recall": round(found / len(corpus.secrets), 4),
        "recall_ci95": _wilson(found, len(corpus.secrets)),
        "false_positive_rate": round(flagged / len(corpus.lookalikes), 4),
        "false_positive_ci95": _wilson(flagged, len(corpus.lookalikes)),
        "per_kind": {
            kind: {
                "recall": round(t["found"] / t["total"], 4),
                "n": t["total"],
                "labelled_as_kind": round(t["same_kind"] / t["total"], 4),
            }
            for kind, t in sorted(per_kind.items())
        },
        "per_family": {
            family: {"false_positive_rate": round(t["flagged"] / t["total"], 4), "n": t["total"]}
            for family, t in sorted(per_family.items())
        },
        "misses": misses,
        "false_positives": false_positives,
    }


def bench_secrets(options: SecretsBenchOptions) -> dict[str, Any]:
    """Detection on both corpora (the seeded one and the dev one, `dev_corpus`), and its cost."""
    corpus = build_corpus(options.seed, options.secrets, options.lookalikes)
    detector = Detector()
    scores = {"seeded": _score(corpus, detector), "dev": _score(dev_corpus(), detector)}

    rng = random.Random(options.seed + 1)
    long_texts = [
        long_memory(rng, 4000, corpus.secrets[i % len(corpus.secrets)] if i % 2 else None)
        for i in range(options.long_memories)
    ]
    short_texts = [case.text for case in corpus.secrets + corpus.lookalikes]
    vault = Vault({"bench": os.urandom(32)}, "bench")  # a throwaway key: the cost of sealing, nothing kept
    for text in short_texts[:50]:  # warm up: first calls pay for lazy regex and cipher set-up
        vault.seal(1, redact(text, detector).secrets)

    latency: dict[str, dict[str, Any]] = {
        "short": {
            "chars_mean": round(statistics.fmean(len(t) for t in short_texts)),
            "redact": _percentiles(_time_ms(short_texts, detector, None, options.repeat)),
            "redact+seal": _percentiles(_time_ms(short_texts, detector, vault, options.repeat)),
        },
        "4000 chars": {
            "chars_mean": round(statistics.fmean(len(t) for t in long_texts)),
            "redact": _percentiles(_time_ms(long_texts, detector, None, options.repeat)),
            "redact+seal": _percentiles(_time_ms(long_texts, detector, vault, options.repeat)),
        },
    }
    p50 = max(latency["4000 chars"]["redact+seal"]["p50"], latency["short"]["redact+seal"]["p50"])
    targets: list[dict[str, Any]] = []
    for name, score in scores.items():
        recall, fp_rate = score["recall"], score["false_positive_rate"]
        targets += [
            {"name": f"{name}: recall ≥ {TARGET_RECALL}", "value": recall, "met": recall >= TARGET_RECALL},
            {
                "name": f"{name}: false positives ≤ {TARGET_FALSE_POSITIVES:.0%}",
                "value": fp_rate,
                "met": fp_rate <= TARGET_FALSE_POSITIVES,
            },
        ]
    targets.append(
        {"name": f"store latency added p50 ≤ {TARGET_P50_MS} ms", "value": p50, "met": p50 <= TARGET_P50_MS}
    )
    return {"seed": options.seed, "corpora": scores, "latency_ms": latency, "targets": targets}


def _print_corpus(name: str, score: dict[str, Any], console: Console) -> None:
    console.print(
        f"[bold]{name}: {score['secrets']} credentials of {score['kinds']} kinds, "
        f"{score['lookalikes']} look-alikes[/bold]"
    )
    kinds = Table("kind", "n", "recall", "labelled as kind", title=f"detection ({name})")
    for kind, row in score["per_kind"].items():
        kinds.add_row(kind, str(row["n"]), f"{row['recall']:.3f}", f"{row['labelled_as_kind']:.3f}")
    console.print(kinds)
    families = Table("look-alike", "n", "false positive rate", title=f"look-alikes ({name})")
    for family, row in score["per_family"].items():
        families.add_row(family, str(row["n"]), f"{row['false_positive_rate']:.3f}")
    console.print(families)
    for miss in score["misses"]:
        console.print(f"[red]missed[/red] {miss['kind']}: {miss['text']!r}")
    for hit in score["false_positives"]:
        console.print(f"[yellow]false positive[/yellow] {hit['family']} as {hit['kinds']}: {hit['text']!r}")


def print_report(report: dict[str, Any], console: Console) -> None:
    console.print(f"seed {report['seed']}")
    for name, score in report["corpora"].items():
        _print_corpus(name, score, console)
    latency = Table(
        "memories", "chars (mean)", "step", "p50 ms", "p95 ms", "p99 ms", "max ms", title="added per store"
    )
    for size, steps in report["latency_ms"].items():
        for step in ("redact", "redact+seal"):
            row = steps[step]
            latency.add_row(
                size,
                str(steps["chars_mean"]),
                step,
                f"{row['p50']:.3f}",
                f"{row['p95']:.3f}",
                f"{row['p99']:.3f}",
                f"{row['max']:.3f}",
            )
    console.print(latency)
    for name, score in report["corpora"].items():
        low, high = score["recall_ci95"]
        fp_low, fp_high = score["false_positive_ci95"]
        console.print(
            f"{name}: recall {score['recall']:.4f} (95% CI {low:.3f} to {high:.3f}), "
            f"false positive rate {score['false_positive_rate']:.4f} (95% CI {fp_low:.3f} to {fp_high:.3f})"
        )
    for target in report["targets"]:
        mark = "[green]met[/green]" if target["met"] else "[red]NOT met[/red]"
        console.print(f"  {target['name']}: {target['value']} {mark}")
