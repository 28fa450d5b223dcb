"""The measurement itself, over the public API only, as one tenant (A) probing another (B) would.

Works against any server an `httpx.AsyncClient` reaches (a `memoria serve` process, or the app
in-process in tests): B stores memories holding a made-up word, A stores a corpus of its own
without it, then A times its own recall of a query with that word against the same query with a
word nobody has (and, as a control for the noise, a second word nobody has). A never sees B's
memories in its results (checked: `leaked`); the question is whether the time it waits tells it
what B wrote. The id probe reads the other channel: the ids A gets back before and after B stores.
"""

from __future__ import annotations

import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from memoria_bench.inference.options import ABSENT, CONTROL, WORD, InferenceOptions
from memoria_bench.inference.stats import compare

NAMESPACE = "notes"  # both tenants' namespaces have the same name, as real ones often do
BATCH = 100  # the store route's largest batch
QUERY = "What did we decide about the {word} rollout last week?"


@dataclass(frozen=True, slots=True)
class Tenant:
    name: str
    headers: dict[str, str]


async def store(http: httpx.AsyncClient, tenant: Tenant, contents: Sequence[str]) -> list[Any]:
    """Store `contents` in the tenant's namespace, batch by batch; the ids the API answers with."""
    ids: list[Any] = []
    for start in range(0, len(contents), BATCH):
        body = [{"content": c, "namespace": NAMESPACE} for c in contents[start : start + BATCH]]
        response = await http.post("/v1/memories", json=body, headers=tenant.headers, timeout=300)
        if response.status_code != 201:
            raise RuntimeError(
                f"store as {tenant.name} answered {response.status_code}: {response.text[:300]}"
            )
        ids += [result["id"] for result in response.json()["results"]]
    return ids


async def _recall(http: httpx.AsyncClient, tenant: Tenant, text: str) -> tuple[float, list[str]]:
    """(milliseconds the tenant waited, contents it got back)."""
    body = {"query": text, "namespace": NAMESPACE, "limit": 10}
    began = time.perf_counter()
    response = await http.post("/v1/recall", json=body, headers=tenant.headers)
    elapsed = (time.perf_counter() - began) * 1000
    if response.status_code != 200:
        raise RuntimeError(f"recall as {tenant.name} answered {response.status_code}: {response.text[:300]}")
    return elapsed, [hit["content"] for hit in response.json()["results"]]


async def time_recalls(
    http: httpx.AsyncClient, tenant: Tenant, options: InferenceOptions
) -> tuple[dict[str, list[float]], int]:
    """Per query kind, the milliseconds of each timed round; and how many of B's memories came back.

    Each round runs the three queries once in a shuffled order, so drift in the machine's load
    falls on all three alike. The same three texts every round: the server then answers the query
    embedding from its cache, which leaves the database's share of the time, where the channel is.
    """
    words = {"present": WORD, "absent": ABSENT, "control": CONTROL}
    texts = {kind: QUERY.format(word=word) for kind, word in words.items()}
    samples: dict[str, list[float]] = {kind: [] for kind in texts}
    rng = random.Random(options.seed)
    leaked = 0
    for round_no in range(options.warmup_rounds + options.rounds):
        kinds = list(texts)
        rng.shuffle(kinds)
        for kind in kinds:
            ms, contents = await _recall(http, tenant, texts[kind])
            leaked += sum(WORD in content for content in contents)
            if round_no >= options.warmup_rounds:
                samples[kind].append(ms)
    return samples, leaked


async def id_probe(
    http: httpx.AsyncClient, a: Tenant, b: Tenant, others_between: int, trial: int
) -> dict[str, Any]:
    """A stores one memory, B stores `others_between`, A stores another: what A's two ids say."""
    (first,) = await store(http, a, [f"id probe {trial}: first of mine"])
    await store(http, b, [f"id probe {trial}: someone else's memory {i}" for i in range(others_between)])
    (second,) = await store(http, a, [f"id probe {trial}: second of mine"])
    gap = second - first if isinstance(first, int) and isinstance(second, int) else None
    return {"others_stored": others_between, "first_id": first, "second_id": second, "id_gap": gap}


async def probe(
    http: httpx.AsyncClient,
    a: Tenant,
    b: Tenant,
    others: Sequence[str],
    own: Sequence[str],
    options: InferenceOptions,
    analyze: Callable[[], Awaitable[None]] | None = None,
    say: Callable[[str], None] = lambda _line: None,
) -> dict[str, Any]:
    """The whole measurement; `analyze` refreshes the planner statistics after the load, as
    autovacuum would after that many inserts (the recall path reads its common lexemes from them)."""
    if any(word in text for text in own for word in (WORD, ABSENT, CONTROL)):
        raise ValueError("A's own corpus must not hold the probe words")
    say(f"storing {len(others):,} memories as {b.name}, each holding {WORD!r}")
    await store(http, b, others)
    say(f"storing {len(own):,} memories as {a.name}")
    await store(http, a, own)
    if analyze is not None:
        await analyze()
    say(f"timing {options.rounds} rounds of {a.name}'s recall ({options.warmup_rounds} untimed first)")
    samples, leaked = await time_recalls(http, a, options)
    trials = [await id_probe(http, a, b, k, i) for i, k in enumerate(options.id_trials)]
    gaps_follow_others = all(t["id_gap"] == t["others_stored"] + 1 for t in trials)
    return {
        "setup": {
            "others_memories": len(others),
            "own_memories": len(own),
            "rounds": options.rounds,
            "word": WORD,
            "absent_word": ABSENT,
            "control_word": CONTROL,
            "query": QUERY,
        },
        "timing": {
            "samples_ms": {kind: [round(ms, 3) for ms in values] for kind, values in samples.items()},
            "word_vs_absent": compare(
                samples["present"], samples["absent"], options.permutations, options.seed
            ),
            "absent_vs_control": compare(
                samples["absent"], samples["control"], options.permutations, options.seed
            ),
            "leaked": leaked,
        },
        "ids": {"trials": trials, "reveals_others_activity": gaps_follow_others},
    }
