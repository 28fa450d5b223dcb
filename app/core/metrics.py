"""The service's Prometheus instruments, on a registry each app owns (`create_app` makes one).

Domain services receive the group they record into (`RecallMetrics`, `EmbeddingMetrics`) and never
see the exposition, which is an adapter (`app/observability`). Nothing here is global: two apps in
one process (the tests make many) have separate registries. Recording is a counter increment or a
histogram observation on a label child bound once, about a microsecond each.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from statistics import quantiles

from prometheus_client import CollectorRegistry, Counter, Histogram

RECENT_RECALLS = 200
HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED_ROUTE = "unmatched"  # no route template: 404, or refused before routing

_HTTP_BUCKETS = (0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_RECALL_BUCKETS = (
    0.0025,
    0.005,
    0.0075,
    0.01,
    0.015,
    0.02,
    0.03,
    0.05,
    0.075,
    0.1,
    0.15,
    0.25,
    0.5,
    1.0,
    2.5,
)
_EMBEDDING_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class HttpMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self._duration = Histogram(
            "memoria_http_request_duration_seconds",
            "HTTP requests from arrival to the last byte of the response, by route template, "
            "method and status class (2xx, 4xx, ...); `unmatched` routes are 404s and refusals "
            "before routing",
            ["route", "method", "status"],
            registry=registry,
            buckets=_HTTP_BUCKETS,
        )
        # label children by (route, method, status): `labels()` costs more than the observation;
        # bounded, since routes are templates and unknown methods fold into "other"
        self._children: dict[tuple[str, str, int], Histogram] = {}

    def observe(self, route: str, method: str, status: int, seconds: float) -> None:
        key = (route, method if method in HTTP_METHODS else "other", status)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = self._duration.labels(key[0], key[1], f"{status // 100}xx")
        child.observe(seconds)


class RecallMetrics:
    """What one recall tells: its time, how many of its hits each leg ranked, degraded or short."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        registry = registry if registry is not None else CollectorRegistry()
        self._duration = Histogram(
            "memoria_recall_duration_seconds",
            "Recalls that answered, from the request's validation to the rows read (embedding included)",
            registry=registry,
            buckets=_RECALL_BUCKETS,
        )
        self._leg_hits = Counter(
            "memoria_recall_leg_hits",
            "Returned recall hits each leg ranked (a hit found by two legs counts for both)",
            ["leg"],
            registry=registry,
        )
        # label children by leg, bound on first use: the legs are recall's (app/recall/legs.py),
        # named by the caller, never listed in core
        self._leg_children: dict[str, Counter] = {}
        self._results = Counter("memoria_recall_results", "Hits returned by recalls", registry=registry)
        self._degraded = Counter(
            "memoria_recall_degraded",
            "Recalls that ran without a leg they wanted (the query could not be embedded)",
            registry=registry,
        )
        short = Counter(
            "memoria_recall_short",
            "Recalls that returned fewer hits than `limit` from a scope known to hold more live "
            "memories (known when it holds at least RECALL__EXACT_SCAN_BELOW); `filtered`: a "
            "category, tag or date filter may have narrowed the scope legitimately",
            ["filtered"],
            registry=registry,
        )
        self._short = {False: short.labels("false"), True: short.labels("true")}
        self._recent: deque[float] = deque(maxlen=RECENT_RECALLS)

    def recent_ms(self) -> dict[str, float | int] | None:
        """The last `RECENT_RECALLS` recalls' count, p50 and p95 in ms (the UI's health page; the
        histogram holds every recall since start, which says little about now). None before any."""
        recent = list(self._recent)
        if not recent:
            return None
        if len(recent) == 1:
            return {"count": 1, "p50": recent[0] * 1000, "p95": recent[0] * 1000}
        cuts = quantiles(recent, n=20, method="inclusive")
        return {"count": len(recent), "p50": cuts[9] * 1000, "p95": cuts[18] * 1000}

    def record(
        self,
        seconds: float,
        leg_hits: Mapping[str, int],
        *,
        results: int,
        limit: int,
        scope_at_least: int,
        filtered: bool,
        degraded: bool,
    ) -> None:
        """`leg_hits`: per leg (every leg, ranked hits or not), the returned hits it ranked;
        `scope_at_least`: live memories the scope is known to hold (0 when unknown)."""
        self._duration.observe(seconds)
        self._recent.append(seconds)
        for leg, hits in leg_hits.items():
            child = self._leg_children.get(leg)
            if child is None:
                child = self._leg_children[leg] = self._leg_hits.labels(leg)
            if hits:
                child.inc(hits)
        self._results.inc(results)
        if degraded:
            self._degraded.inc()
        if results < limit and results < scope_at_least:
            self._short[filtered].inc()


class EmbeddingCalls:
    """The instruments of one model, bound once: what `InstrumentedEmbedder` records into."""

    def __init__(self, duration: Histogram, errors: Counter, texts: Counter, model_id: str) -> None:
        self.query_seconds = duration.labels(model_id, "query")
        self.documents_seconds = duration.labels(model_id, "documents")
        self.query_errors = errors.labels(model_id, "query")
        self.documents_errors = errors.labels(model_id, "documents")
        self.documents = texts.labels(model_id)


class EmbeddingMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self._duration = Histogram(
            "memoria_embedding_duration_seconds",
            "Embedding calls by model and operation (`query`: one recall query, query-cache hits "
            "included; `documents`: a batch of stored text), failed ones included",
            ["model", "op"],
            registry=registry,
            buckets=_EMBEDDING_BUCKETS,
        )
        self._errors = Counter(
            "memoria_embedding_errors",
            "Embedding calls that failed (EmbeddingError: provider outage, timeout, bad answer)",
            ["model", "op"],
            registry=registry,
        )
        self._texts = Counter(
            "memoria_embedding_documents", "Texts sent to `documents` calls", ["model"], registry=registry
        )

    def for_model(self, model_id: str) -> EmbeddingCalls:
        return EmbeddingCalls(self._duration, self._errors, self._texts, model_id)


class JobMetrics:
    """Failed job runs, counted as they happen: the queue gauges show how many jobs are left
    `failed`, this shows how often runs fail (a provider flapping shows here before it shows there)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        registry = registry if registry is not None else CollectorRegistry()
        self._failures = Counter(
            "memoria_job_failures",
            "Job runs that raised, by kind; final=true when the job ran out of attempts and was left failed",
            ["kind", "final"],
            registry=registry,
        )

    def failed(self, kind: str, final: bool) -> None:
        self._failures.labels(kind, "true" if final else "false").inc()


class RateLimitMetrics:
    """Requests a rate limit refused with 429, by limit: `key` (an API key's requests) or `address`
    (a client address locked out after failed authentications)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        registry = registry if registry is not None else CollectorRegistry()
        limited = Counter(
            "memoria_rate_limited_requests",
            "Requests answered 429 (the hook: {} with outcome rate-limited), by the limit that refused them",
            ["limit"],
            registry=registry,
        )
        self._limited = {limit: limited.labels(limit) for limit in ("key", "address")}

    def limited(self, limit: str) -> None:
        self._limited[limit].inc()


class CaptureMetrics:
    """What captures left out and folded: the skip rules' reasons (app/capture/rules.py), counted
    as the capture route applies them, and the exchanges folded into an episode they repeat."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        registry = registry if registry is not None else CollectorRegistry()
        self._skipped = Counter(
            "memoria_capture_skipped",
            "Captured exchanges not stored, by the reason the capture route gave (greeting, "
            "api-error, interrupted, permission-refused, progress-only, unanswered, empty, disabled)",
            ["reason"],
            registry=registry,
        )
        self._folded = Counter(
            "memoria_capture_folded",
            "Captured exchanges that repeated an episode of their namespace and were counted as one "
            "more sighting of it instead of stored",
            registry=registry,
        )

    def skipped(self, reason: str, count: int = 1) -> None:
        self._skipped.labels(reason).inc(count)

    def folded(self, count: int) -> None:
        if count:
            self._folded.inc(count)


class HookMetrics:
    """What the hooks put into sessions' context: prompts left without any, by reason, and the
    characters injected, by event. The reasons are few and fixed: `trivial` (the prompt named no
    topic: a slash command, an acknowledgement, too short), `floor` (no recalled memory clears the
    relevance floor), `seen` (the session was given every memory that cleared it), `budget` (the
    session's context budget is spent) and `no-results` (recall found nothing)."""

    REASONS = ("trivial", "floor", "seen", "budget", "no-results")

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        registry = registry if registry is not None else CollectorRegistry()
        without = Counter(
            "memoria_hook_prompts_without_context",
            "Prompts the UserPromptSubmit hook answered without context, by reason (trivial, floor, "
            "seen, budget, no-results)",
            ["reason"],
            registry=registry,
        )
        self._without = {reason: without.labels(reason) for reason in self.REASONS}
        injected = Counter(
            "memoria_hook_context_chars",
            "Characters of additionalContext the hooks injected, by event (prompt, session-start)",
            ["event"],
            registry=registry,
        )
        self._chars = {event: injected.labels(event) for event in ("prompt", "session-start")}

    def without_context(self, reason: str) -> None:
        self._without[reason].inc()

    def injected(self, event: str, chars: int) -> None:
        self._chars[event].inc(chars)


class Metrics:
    """Every instrument of one app, on its own registry (what `/metrics` exposes)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.http = HttpMetrics(self.registry)
        self.recall = RecallMetrics(self.registry)
        self.embeddings = EmbeddingMetrics(self.registry)
        self.jobs = JobMetrics(self.registry)
        self.rate_limits = RateLimitMetrics(self.registry)
        self.capture = CaptureMetrics(self.registry)
        self.hooks = HookMetrics(self.registry)
