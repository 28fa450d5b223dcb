"""Adversarial walk: every route and method of the app, for every actor state, aimed at alice's data.

The routes come from the app itself (`app.routes`), so a route added later is walked without
anyone remembering to: it fails `test_every_route_is_classified_and_probed` until it is given a
class here (the scope this suite expects it to need, whether it changes data) and probes.

Actor states: no key, a garbage key, a revoked key, an expired key; alice with a key of each single
scope; bob (a key with every scope) with no share of alice's `team` namespace, with a read share,
with a write share, and after the share is revoked. Each request is a realistic one aimed at alice's
data: her memory ids (and the internal row ids the API keeps to itself), her namespaces by name and
by address (`@alice/name`), her concept ids — on the REST routes, the recall hook and every MCP tool.

For each answer the walk checks that
- its status is one this actor may get (401 without a working key, 403 for a missing scope or a
  write through a read share, 404 for what is not yours; never a 5xx), or, where refusals are not
  errors, the refusal's own shape (the hook's empty `{}`, an MCP tool error);
- it holds no marker it should not: none of alice's canaries for someone who may not read them,
  and her credentials (redacted into placeholders when stored) in no answer at all except her own
  `secrets:read` read of the memory;
- where the actor may read (the owner with the right scope, bob through a share), the answer does
  show the data (so the walk reaches real rows and cannot pass by answering 404 to everything);
and that alice's rows (memories, namespaces, shares, sealed secrets, concept graph, keys) are the
same after each actor state as before it, except the `team` namespace while bob holds a write
share there.

Rate limits are off for the walk (it sends ~1,300 requests, many with bad keys, from one address);
tests/test_adversarial_rate_limits.py checks they still answer 429 without leaking.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import asyncpg
import httpx
import pytest
from litestar import Litestar
from litestar.routes import ASGIRoute, HTTPRoute
from litestar.testing import AsyncTestClient
from pydantic import SecretStr

from app.auth.scopes import ADMIN, ANY_KEY, READ, SECRETS_READ, WRITE
from app.auth.settings import AuthSettings
from app.embeddings import LocalEmbedder
from app.factory import create_app
from app.hooks.hosts import HOSTS, Host
from app.settings import HookSettings, MetricsSettings, Settings
from tests.fakes.tenant import (
    CANARIES,
    CREDENTIALS,
    OTHER,
    OWNER,
    PRIVATE,
    TEAM,
    THIRD,
    Actor,
    Client,
    Headers,
    Markers,
    Planted,
    Share,
    answer_text,
    changed_sections,
    drain,
    keyless_actors,
    outside,
    plant,
    sealing_settings,
    setup_keys,
    single_scope_actors,
    snapshot,
)

HOOK = "/v1/hooks/claude-code/user-prompt-submit"
START = "/v1/hooks/claude-code/session-start"
CAPTURE = "/v1/capture/claude-code"
#: The hosts beside Claude Code: the same routes under their own names, probed alike (fewer cases).
OTHER_HOSTS = [host for host in HOSTS.values() if host.name != "claude-code"]
METRICS_TOKEN = "adversarial-scrape-token"

# ---------------------------------------------------------------------------------------------
# Route classes: what this suite expects of each (path, method) the app serves.

RouteKind = Literal["public", "v1", "hook", "mcp", "metrics", "ui"]


@dataclass(frozen=True, slots=True)
class RouteClass:
    kind: RouteKind
    scope: str | None = None
    """The scope a `v1` route should need (ANY_KEY: every working key)."""
    mutates: bool = False
    """Whether a request that passes changes data (the owner's own legitimate writes are not sent)."""
    reveals_credentials: bool = False
    """The owner's `secrets:read` answer: the one place a clear credential may appear."""


PUBLIC = RouteClass("public")
SECRETS = RouteClass("v1", SECRETS_READ, reveals_credentials=True)

ROUTES: dict[tuple[str, str], RouteClass] = {
    ("/healthz", "GET"): PUBLIC,
    ("/readyz", "GET"): PUBLIC,
    ("/metrics", "GET"): RouteClass("metrics"),  # its own token; no API key opens it
    ("/v1/memories", "GET"): RouteClass("v1", READ),
    ("/v1/memories", "POST"): RouteClass("v1", WRITE, mutates=True),
    ("/v1/memories/{memory_id:int}", "GET"): RouteClass("v1", READ),
    ("/v1/memories/{memory_id:int}", "PATCH"): RouteClass("v1", WRITE, mutates=True),
    ("/v1/memories/{memory_id:int}", "DELETE"): RouteClass("v1", WRITE, mutates=True),
    ("/v1/memories/{memory_id:int}/secrets", "GET"): SECRETS,
    ("/v1/memories/{memory_id:int}/promote", "POST"): RouteClass("v1", WRITE, mutates=True),
    ("/v1/memories/{memory_id:int}/restore", "POST"): RouteClass("v1", WRITE, mutates=True),
    ("/v1/memories/{memory_id:int}/links", "GET"): RouteClass("v1", READ),
    ("/v1/memories/{memory_id:int}/links", "POST"): RouteClass("v1", WRITE, mutates=True),
    ("/v1/memories/{memory_id:int}/links/{kind:str}/{target:int}", "DELETE"): RouteClass(
        "v1", WRITE, mutates=True
    ),
    (CAPTURE, "POST"): RouteClass("v1", WRITE, mutates=True),
    ("/v1/namespaces", "GET"): RouteClass("v1", READ),
    ("/v1/namespaces/rename", "POST"): RouteClass("v1", WRITE, mutates=True),
    ("/v1/namespaces/merge", "POST"): RouteClass("v1", WRITE, mutates=True),
    ("/v1/me", "GET"): RouteClass("v1", ANY_KEY),
    ("/v1/shares", "GET"): RouteClass("v1", READ),
    ("/v1/shares", "POST"): RouteClass("v1", ADMIN, mutates=True),
    ("/v1/shares", "DELETE"): RouteClass("v1", ADMIN, mutates=True),
    ("/v1/recall", "POST"): RouteClass("v1", READ),
    ("/v1/links", "GET"): RouteClass("v1", READ),  # the links an export writes
    ("/v1/graph/concepts", "GET"): RouteClass("v1", READ),
    ("/v1/graph/concepts/{concept_id:int}", "GET"): RouteClass("v1", READ),
    ("/v1/graph/concepts/{concept_id:int}/neighborhood", "GET"): RouteClass("v1", READ),
    ("/v1/graph/neighbors", "POST"): RouteClass("v1", READ),
    ("/v1/graph/concepts/{concept_id:int}/merge", "POST"): RouteClass("v1", WRITE, mutates=True),
    (HOOK, "POST"): RouteClass("hook", READ),
    (START, "POST"): RouteClass("hook", READ),
    **{
        route: cls
        for host in OTHER_HOSTS
        for route, cls in [
            ((f"/v1/hooks/{host.name}/user-prompt-submit", "POST"), RouteClass("hook", READ)),
            ((f"/v1/hooks/{host.name}/session-start", "POST"), RouteClass("hook", READ)),
            ((f"/v1/capture/{host.name}", "POST"), RouteClass("v1", WRITE, mutates=True)),
        ]
    },
    ("/mcp", "*"): RouteClass("mcp"),  # each tool call names its scope (`Probe.scope`)
    # The web UI: an API key opens none of its pages (they need a session cookie, see ui_probes).
    ("/signin", "GET"): PUBLIC,
    ("/ui/static/{file_path:path}", "GET"): PUBLIC,
    ("/ui/static/{file_path:path}", "HEAD"): PUBLIC,
    **{
        (path, method): RouteClass("ui")
        for path, method in [
            ("/", "GET"),
            ("/signin", "POST"),
            ("/signout", "POST"),
            ("/namespaces", "GET"),
            ("/memories", "GET"),
            ("/memories/new", "GET"),
            ("/memories/new", "POST"),
            ("/memories/{memory_id:int}", "GET"),
            ("/memories/{memory_id:int}/edit", "GET"),
            ("/memories/{memory_id:int}/edit", "POST"),
            ("/memories/{memory_id:int}/forget", "POST"),
            ("/memories/{memory_id:int}/restore", "POST"),
            ("/memories/{memory_id:int}/promote", "POST"),
            ("/memories/{memory_id:int}/purge", "GET"),
            ("/memories/{memory_id:int}/purge", "POST"),
            ("/memories/{memory_id:int}/secrets", "POST"),
            ("/memories/{memory_id:int}/links", "POST"),
            ("/memories/{memory_id:int}/unlink", "POST"),
            ("/recall", "GET"),
            ("/concepts", "GET"),
            ("/concepts/{concept_id:int}", "GET"),
            ("/concepts/{concept_id:int}/neighborhood.json", "GET"),
            ("/health", "GET"),
        ]
    },
}
"""Every (path, method) but OPTIONS (answered for everyone, without authentication) and the API
documentation under /schema (public, static)."""


def route_class(path: str, method: str) -> RouteClass | None:
    if method == "OPTIONS" or path == "/schema" or path.startswith("/schema/"):
        return PUBLIC
    return ROUTES.get((path, method))


def served_routes(app: Litestar) -> set[tuple[str, str]]:
    """(path, method) of every route the app serves; an ASGI mount (any method) as (path, "*")."""
    served: set[tuple[str, str]] = set()
    for route in app.routes:
        if isinstance(route, HTTPRoute):
            served |= {(route.path, method) for method in route.methods}
        elif isinstance(route, ASGIRoute):
            served.add((route.path, "*"))
        else:  # a websocket route would need a walk of its own
            served.add((route.path, type(route).__name__))
    return served


# ---------------------------------------------------------------------------------------------
# Probes: realistic requests aimed at alice's data.

Target = Literal["private", "team", "none"]
Via = Literal["read", "write", "owner"]

OK = frozenset({200})
NOT_FOUND = frozenset({404})
INVALID = frozenset({422})
CREATED = frozenset({201})
GONE = frozenset({204})
ABSENT = frozenset({204, 404})  # a second delete of what the first one removed


@dataclass(frozen=True, slots=True)
class Probe:
    """One request. `target`: whose data it aims at (`none`: the caller's own view, e.g. a list
    without a namespace). `via`: what a share of alice's `team` lets bob do with a `team` target —
    `read` (any share), `write` (a write share; a read share answers 403), `owner` (nothing: the
    route is for the owner alone). `refused`: bob's answer where it is not his to reach. `owner`:
    alice's answer with the right scope; `granted`: bob's through a share. `shows`: the marker a 2xx
    answer of an actor who may read must hold."""

    route: tuple[str, str]
    url: str
    body: Any = None
    target: Target = "none"
    via: Via = "owner"
    refused: frozenset[int] = NOT_FOUND
    owner: frozenset[int] = OK
    granted: frozenset[int] = OK
    shows: str | None = None
    owner_sees: bool = True
    """Whether `shows` holds for the owner's answer too (not where she names her own namespace by
    the address only a grantee uses)."""
    scope: str | None = None
    """The scope an MCP tool call should need (the /mcp route itself names none: each tool does)."""
    mutates: bool = False
    """An MCP tool call that changes data."""
    refusal_is_error: bool = False
    """An MCP refusal is a tool error (`isError`), not just an empty result."""
    phase: int = 0
    """0 reads, 1 writes, 2 deletes: within an actor state reads go first, so what a write share
    changes does not hide what the reads should see."""

    @property
    def method(self) -> str:
        return self.route[1] if self.route[1] != "*" else "POST"

    def describe(self) -> str:
        body = f" {self.body}" if self.body is not None else ""
        return f"{self.method} {self.url}{body}"


MEMORIES, MEMORY = "/v1/memories", "/v1/memories/{memory_id:int}"
CONCEPT = "/v1/graph/concepts/{concept_id:int}"


def probes(seed: Planted) -> list[Probe]:
    """The REST routes and the recall hook, aimed at alice's data."""
    m = seed.markers
    p1, p2, p3, t1 = seed.p_secret, seed.p_sensitive, seed.p_deleted, seed.t_secret
    (cp1, cp2), (ct1, ct2) = seed.private_concepts, seed.team_concepts
    addr_private, addr_team = f"@{OWNER}/{PRIVATE}", f"@{OWNER}/{TEAM}"
    everything = "include_sensitive=true&include_deleted=true"
    get, patch, delete = (MEMORY, "GET"), (MEMORY, "PATCH"), (MEMORY, "DELETE")
    store, recall = (MEMORIES, "POST"), ("/v1/recall", "POST")
    listing, secrets = (MEMORIES, "GET"), (MEMORY + "/secrets", "GET")
    grant, revoke = ("/v1/shares", "POST"), ("/v1/shares", "DELETE")
    rename, merge_into = ("/v1/namespaces/rename", "POST"), ("/v1/namespaces/merge", "POST")
    search, concept = ("/v1/graph/concepts", "GET"), (CONCEPT, "GET")
    hood, neighbors, merge = (
        (CONCEPT + "/neighborhood", "GET"),
        ("/v1/graph/neighbors", "POST"),
        (
            CONCEPT + "/merge",
            "POST",
        ),
    )
    hook, start = (HOOK, "POST"), (START, "POST")
    capture, promote = (CAPTURE, "POST"), (MEMORY + "/promote", "POST")
    restore = (MEMORY + "/restore", "POST")
    links, add_link = (MEMORY + "/links", "GET"), (MEMORY + "/links", "POST")
    unlink = (MEMORY + "/links/{kind:str}/{target:int}", "DELETE")
    bobs_own = seed.bob_memory
    session_start = {"hook_event_name": "SessionStart", "source": "startup", "session_id": "s-bob"}

    def exchange(content: str) -> dict[str, Any]:
        turn = {"session_id": "s-bob", "turn": 0, "prompt": f"bob was here: {content}", "reply": "noted"}
        return {"exchanges": [turn]}

    def prompt(canary: str) -> dict[str, str]:
        return {
            "prompt": f"How does {canary} deploy, and with which token?",
            "hook_event_name": "UserPromptSubmit",
        }

    def bobs(content: str, namespace: str) -> dict[str, str]:
        return {"content": f"bob was here: {content}", "namespace": namespace}

    return [
        # one memory, by id
        Probe(get, f"{MEMORIES}/{p1}", target="private", shows="private"),
        Probe(get, f"{MEMORIES}/{p1}?include_deleted=true", target="private", shows="private"),
        Probe(get, f"{MEMORIES}/{p2}", target="private", shows="sensitive"),
        Probe(get, f"{MEMORIES}/{p3}", target="private", owner=NOT_FOUND),
        Probe(get, f"{MEMORIES}/{p3}?include_deleted=true", target="private", shows="deleted"),
        Probe(get, f"{MEMORIES}/{t1}", target="team", via="read", shows="team"),
        Probe(get, f"{MEMORIES}/{seed.internal_memory}#internal", target="private", owner=NOT_FOUND),
        # the sealed originals: the owner's alone, whatever is shared
        Probe(secrets, f"{MEMORIES}/{p1}/secrets", target="private", shows="github"),
        Probe(secrets, f"{MEMORIES}/{t1}/secrets", target="team", shows="aws"),
        Probe(secrets, f"{MEMORIES}/{p3}/secrets", target="private", owner=NOT_FOUND),
        # a memory's links (each planted memory links to its namespace's other one)
        Probe(links, f"{MEMORIES}/{p1}/links", target="private", shows="sensitive"),
        Probe(links, f"{MEMORIES}/{t1}/links", target="team", via="read", shows="team"),
        Probe(links, f"{MEMORIES}/{p3}/links", target="private", owner=OK),  # her trash: hers still
        Probe(links, f"{MEMORIES}/{seed.internal_memory}/links#internal", target="private", owner=NOT_FOUND),
        # lists
        Probe(listing, f"{MEMORIES}?namespace={PRIVATE}&{everything}", target="private", shows="private"),
        Probe(
            listing, f"{MEMORIES}?namespace={addr_private}&{everything}", target="private", owner=NOT_FOUND
        ),
        Probe(listing, f"{MEMORIES}?namespace={TEAM}&{everything}", target="team", shows="team"),
        Probe(
            listing,
            f"{MEMORIES}?namespace={addr_team}&{everything}",
            target="team",
            via="read",
            owner=NOT_FOUND,
            shows="team",
        ),
        Probe(
            listing,
            f"{MEMORIES}?namespace={addr_team}&namespace={addr_private}",
            target="private",
            owner=NOT_FOUND,
        ),
        # near misses of the address: another spelling is another (missing) namespace, share or not
        Probe(listing, f"{MEMORIES}?namespace=@{OWNER.upper()}/{TEAM}", target="team", owner=NOT_FOUND),
        Probe(listing, f"{MEMORIES}?namespace={addr_team}/", target="team", owner=NOT_FOUND),
        Probe(listing, f"{MEMORIES}?namespace=@{OWNER}/{TEAM.upper()}", target="team", owner=NOT_FOUND),
        Probe(listing, f"{MEMORIES}?{everything}", shows="private"),
        # the links an export writes (ids only: the statuses say who may read them)
        Probe(
            ("/v1/links", "GET"), f"/v1/links?namespace={PRIVATE}&include_sensitive=true", target="private"
        ),
        Probe(("/v1/links", "GET"), f"/v1/links?namespace={addr_private}", target="private", owner=NOT_FOUND),
        Probe(
            ("/v1/links", "GET"),
            f"/v1/links?namespace={addr_team}",
            target="team",
            via="read",
            owner=NOT_FOUND,
        ),
        Probe(("/v1/links", "GET"), "/v1/links?include_sensitive=true"),
        # recall
        Probe(
            recall,
            f"/v1/recall#{PRIVATE}",
            {
                "query": f"{m.private} release token",
                "namespace": PRIVATE,
                "explain": True,
                "filters": {"include_sensitive": True},
            },
            target="private",
            shows="private",
        ),
        Probe(
            recall,
            f"/v1/recall#{addr_private}",
            {"query": f"{m.private} release token", "namespace": addr_private, "explain": True},
            target="private",
            owner=NOT_FOUND,
        ),
        Probe(
            recall,
            "/v1/recall#both-addresses",
            {"query": f"{m.private} {m.team}", "namespaces": [addr_team, addr_private], "explain": True},
            target="private",
            owner=NOT_FOUND,
        ),
        Probe(
            recall,
            f"/v1/recall#{addr_team}",
            {"query": f"{m.team} AWS deploy", "namespace": addr_team, "explain": True},
            target="team",
            via="read",
            owner=NOT_FOUND,
            shows="team",
        ),
        Probe(
            recall,
            f"/v1/recall#{TEAM}",
            {"query": f"{m.team} AWS deploy", "namespace": TEAM, "explain": True},
            target="team",
            shows="team",
        ),
        Probe(
            recall,
            "/v1/recall#own",
            {
                "query": f"{m.private} {m.team} {m.sensitive}",
                "explain": True,
                "filters": {"include_sensitive": True},
            },
        ),
        # the caller's own views
        Probe(("/v1/namespaces", "GET"), "/v1/namespaces"),
        Probe(("/metrics", "GET"), "/metrics"),
        Probe(("/v1/me", "GET"), "/v1/me"),
        Probe(("/v1/shares", "GET"), "/v1/shares"),
        # the concept graph (concept ids are the owner's alone, even in a shared namespace)
        Probe(
            search, f"/v1/graph/concepts?q={m.private}&namespace={PRIVATE}", target="private", shows="private"
        ),
        Probe(
            search,
            f"/v1/graph/concepts?q={m.private}&namespace={addr_private}",
            target="private",
            owner=NOT_FOUND,
        ),
        Probe(
            search,
            f"/v1/graph/concepts?q={m.team}&namespace={addr_team}",
            target="team",
            via="read",
            owner=NOT_FOUND,
        ),
        Probe(search, f"/v1/graph/concepts?q={m.private}", shows="private"),
        Probe(concept, f"/v1/graph/concepts/{cp1}", target="private", shows="private"),
        Probe(concept, f"/v1/graph/concepts/{ct1}", target="team", shows="team"),
        Probe(
            concept, f"/v1/graph/concepts/{seed.internal_concept}#internal", target="private", owner=NOT_FOUND
        ),
        Probe(hood, f"/v1/graph/concepts/{cp1}/neighborhood?depth=3", target="private"),
        Probe(hood, f"/v1/graph/concepts/{ct1}/neighborhood?depth=3", target="team"),
        Probe(neighbors, "/v1/graph/neighbors#private", {"concept_ids": [cp1]}, target="private"),
        Probe(neighbors, "/v1/graph/neighbors#team", {"concept_ids": [ct1]}, target="team"),
        Probe(
            neighbors,
            "/v1/graph/neighbors#mixed",
            {"concept_ids": [seed.bob_concept, cp1]},
            target="private",
            owner=NOT_FOUND,
        ),
        # the recall hook (a refusal is an empty `{}`, never an error a person would see)
        Probe(hook, f"{HOOK}?namespace={PRIVATE}", prompt(m.private), target="private", shows="private"),
        Probe(hook, f"{HOOK}?namespace={addr_private}", prompt(m.private), target="private"),
        Probe(
            hook,
            f"{HOOK}?namespace={addr_team}",
            prompt(m.team),
            target="team",
            via="read",
            shows="team",
            owner_sees=False,
        ),
        Probe(hook, f"{HOOK}?namespace={TEAM}", prompt(m.team), target="team", shows="team"),
        Probe(hook, HOOK, prompt(m.private)),
        # the session-start hook: the namespace's pinned and most important memories, refused as `{}`
        Probe(start, f"{START}?namespace={PRIVATE}", session_start, target="private", shows="private"),
        Probe(start, f"{START}?namespace={addr_private}", session_start, target="private"),
        Probe(
            start,
            f"{START}?namespace={addr_team}",
            session_start,
            target="team",
            via="read",
            shows="team",
            owner_sees=False,
        ),
        Probe(start, START, session_start),
        # writes
        Probe(store, f"{MEMORIES}#{addr_private}", bobs("private", addr_private), target="private", phase=1),
        Probe(
            store,
            f"{MEMORIES}#batch-{addr_private}",
            [bobs("own", "bob-own"), bobs("private", addr_private)],
            target="private",
            phase=1,
        ),
        Probe(
            store,
            f"{MEMORIES}#{addr_team}",
            bobs("team", addr_team),
            target="team",
            via="write",
            granted=CREATED,
            phase=1,
        ),
        Probe(
            store,
            f"{MEMORIES}#batch-{addr_team}",
            [bobs("team 1", addr_team), bobs("team 2", addr_team)],
            target="team",
            via="write",
            granted=CREATED,
            phase=1,
        ),
        Probe(capture, f"{CAPTURE}?namespace={addr_private}", exchange("private"), target="private", phase=1),
        Probe(
            capture,
            f"{CAPTURE}?namespace={addr_team}",
            exchange("team"),
            target="team",
            via="write",
            phase=1,
        ),
        # links: to or from what is not his, into another namespace, or a supersede on store
        Probe(
            add_link, f"{MEMORIES}/{p1}/links", {"kind": "part-of", "target": p2}, target="private", phase=1
        ),
        Probe(
            add_link,
            f"{MEMORIES}/{bobs_own}/links#to-private",
            {"kind": "supersedes", "target": p1},
            target="private",
            owner=NOT_FOUND,
            phase=1,
        ),
        Probe(
            add_link,
            f"{MEMORIES}/{t1}/links#to-private",
            {"kind": "supersedes", "target": p1},
            target="private",
            phase=1,
        ),
        Probe(
            add_link,
            f"{MEMORIES}/{bobs_own}/links#to-team",
            {"kind": "supersedes", "target": t1},
            target="team",
            via="write",
            granted=INVALID,  # both his to see, but links join memories of one namespace
            owner=NOT_FOUND,
            phase=1,
        ),
        Probe(
            add_link,
            f"{MEMORIES}/{t1}/links#team",
            {"kind": "part-of", "target": seed.t_other},
            target="team",
            via="write",
            granted=OK | CREATED,
            shows="team",
            phase=1,
        ),
        Probe(
            store,
            f"{MEMORIES}#supersedes-private",
            {"content": "bob was here: supersedes", "namespace": "bob-own", "supersedes": [p1]},
            target="private",
            phase=1,
        ),
        Probe(
            store,
            f"{MEMORIES}#supersedes-team-from-own",
            {"content": "bob was here: supersedes", "namespace": "bob-own", "supersedes": [t1]},
            target="team",
            via="write",
            granted=INVALID,
            phase=1,
        ),
        Probe(
            store,
            f"{MEMORIES}#supersedes-team",
            {"content": "bob was here: newer", "namespace": addr_team, "supersedes": [seed.t_other]},
            target="team",
            via="write",
            granted=CREATED,
            phase=1,
        ),
        Probe(promote, f"{MEMORIES}/{p1}/promote", {}, target="private", phase=1),
        Probe(promote, f"{MEMORIES}/{p3}/promote", {}, target="private", phase=1),
        Probe(restore, f"{MEMORIES}/{p3}/restore", {}, target="private", phase=1),
        Probe(restore, f"{MEMORIES}/{p1}/restore", {}, target="private", phase=1),
        Probe(restore, f"{MEMORIES}/{t1}/restore", {}, target="team", via="write", shows="team", phase=1),
        Probe(promote, f"{MEMORIES}/{t1}/promote", {}, target="team", via="write", shows="team", phase=1),
        Probe(patch, f"{MEMORIES}/{p1}", {"content": "hijacked by bob"}, target="private", phase=1),
        Probe(patch, f"{MEMORIES}/{p2}", {"is_sensitive": False}, target="private", phase=1),
        Probe(patch, f"{MEMORIES}/{p3}", {"importance": 1.0}, target="private", phase=1),
        Probe(
            patch,
            f"{MEMORIES}/{t1}",
            {"importance": 0.05},
            target="team",
            via="write",
            shows="team",
            phase=1,
        ),
        Probe(
            patch,
            f"{MEMORIES}/{t1}#content",
            {"content": "hijacked by bob"},
            target="team",
            via="write",
            phase=1,
        ),
        Probe(merge, f"/v1/graph/concepts/{cp1}/merge", {"into": cp2}, target="private", phase=1),
        Probe(merge, f"/v1/graph/concepts/{ct1}/merge", {"into": ct2}, target="team", phase=1),
        Probe(
            merge, f"/v1/graph/concepts/{seed.bob_concept}/merge", {"into": cp1}, target="private", phase=1
        ),
        Probe(
            grant,
            "/v1/shares#private",
            {"namespace": PRIVATE, "user": THIRD, "permission": "write"},
            target="private",
            phase=1,
        ),
        Probe(
            grant,
            "/v1/shares#address",
            {"namespace": addr_team, "user": THIRD, "permission": "write"},
            target="team",
            refused=INVALID,
            phase=1,
        ),
        Probe(grant, "/v1/shares#team", {"namespace": TEAM, "user": THIRD}, target="team", phase=1),
        # a rename names the caller's own namespaces only: alice's are not bob's to rename, by name
        # (his own lookup does not find them) or by address (not an own name)
        Probe(
            rename,
            "/v1/namespaces/rename#private",
            {"namespace": PRIVATE, "new_name": "x"},
            target="private",
            phase=1,
        ),
        Probe(
            rename, "/v1/namespaces/rename#team", {"namespace": TEAM, "new_name": "x"}, target="team", phase=1
        ),
        Probe(
            rename,
            "/v1/namespaces/rename#address",
            {"namespace": addr_team, "new_name": "x"},
            target="team",
            refused=INVALID,
            phase=1,
        ),
        # a merge too: alice's namespaces are not bob's to merge away nor to merge his into
        Probe(
            merge_into,
            "/v1/namespaces/merge#private",
            {"namespace": PRIVATE, "into": "bob-own", "apply": True},
            target="private",
            phase=1,
        ),
        Probe(
            merge_into,
            "/v1/namespaces/merge#team",
            {"namespace": "bob-own", "into": TEAM, "apply": True},
            target="team",
            phase=1,
        ),
        Probe(
            merge_into,
            "/v1/namespaces/merge#address",
            {"namespace": "bob-own", "into": addr_team, "apply": True},
            target="team",
            refused=INVALID,
            phase=1,
        ),
        # deletes
        # (links first: deleting t1 below takes its links out of reach)
        Probe(unlink, f"{MEMORIES}/{p1}/links/see-also/{p2}", target="private", phase=2),
        Probe(unlink, f"{MEMORIES}/{t1}/links/see-also/{p1}", target="private", phase=2),
        Probe(
            unlink,
            f"{MEMORIES}/{t1}/links/see-also/{seed.t_other}",
            target="team",
            via="write",
            granted=GONE,
            phase=2,
        ),
        Probe(delete, f"{MEMORIES}/{p1}", target="private", phase=2),
        Probe(delete, f"{MEMORIES}/{p1}?purge=true", target="private", phase=2),
        Probe(delete, f"{MEMORIES}/{p3}?purge=true", target="private", phase=2),
        Probe(delete, f"{MEMORIES}/{t1}", target="team", via="write", granted=GONE, phase=2),
        Probe(delete, f"{MEMORIES}/{t1}?purge=true", target="team", via="write", granted=ABSENT, phase=2),
        Probe(revoke, f"/v1/shares?namespace={TEAM}&user={OTHER}", target="team", phase=2),
        Probe(
            revoke, f"/v1/shares?namespace={addr_team}&user={OTHER}", target="team", refused=INVALID, phase=2
        ),
        Probe(revoke, f"/v1/shares?namespace={PRIVATE}&user={OTHER}", target="private", phase=2),
        *[probe for host in OTHER_HOSTS for probe in host_probes(host, seed, addr_private)],
    ]


def host_probes(host: Host, seed: Planted, addr_private: str) -> list[Probe]:
    """Another host's hook and capture routes: the same answers as Claude Code's, in its event names."""
    hook = (f"/v1/hooks/{host.name}/user-prompt-submit", "POST")
    start = (f"/v1/hooks/{host.name}/session-start", "POST")
    capture = (f"/v1/capture/{host.name}", "POST")
    asked = {
        "prompt": f"How does {seed.markers.private} deploy, and with which token?",
        "hook_event_name": host.prompt_event,
    }
    started = {"hook_event_name": host.start_event, "source": "startup", "session_id": f"s-bob-{host.name}"}
    turn = {
        "session_id": f"s-bob-{host.name}",
        "turn": 0,
        "prompt": "bob was here: private",
        "reply": "noted",
    }
    return [
        Probe(hook, f"{hook[0]}?namespace={PRIVATE}", asked, target="private", shows="private"),
        Probe(hook, f"{hook[0]}?namespace={addr_private}", asked, target="private"),
        Probe(start, f"{start[0]}?namespace={PRIVATE}", started, target="private", shows="private"),
        Probe(
            capture,
            f"{capture[0]}?namespace={addr_private}",
            {"exchanges": [turn]},
            target="private",
            phase=1,
        ),
    ]


_PARAM = re.compile(r"\{([a-z_]+)(?::[a-z]+)?\}")


def generic_probes(served: set[tuple[str, str]], seed: Planted) -> list[Probe]:
    """OPTIONS of every route and the public routes, with path parameters filled with alice's ids."""
    fill: dict[str, Callable[[], str]] = {
        "memory_id": lambda: str(seed.p_secret),
        "concept_id": lambda: str(seed.private_concepts[0]),
        "kind": lambda: "see-also",
        "target": lambda: str(seed.p_sensitive),
    }
    made = []
    for path, method in sorted(served):
        cls = route_class(path, method)
        if cls is None or cls.kind != "public":
            continue
        url = _PARAM.sub(lambda match: fill.get(match[1], lambda: "x")(), path)
        statuses = frozenset({204}) if method == "OPTIONS" else frozenset({200, 404})
        made.append(Probe((path, method), url, owner=statuses))
    return made


def ui_probes(served: set[tuple[str, str]], seed: Planted) -> list[Probe]:
    """Every web UI page and form with alice's ids, sent with each actor's API key and no session:
    a page sends to the sign-in page (the walk follows the 303), whatever the key; the sign-in form
    refuses a post without its own token (403)."""
    fill = {"memory_id": str(seed.p_secret), "concept_id": str(seed.private_concepts[0])}
    made = []
    for path, method in sorted(served):
        cls = route_class(path, method)
        if cls is None or cls.kind != "ui":
            continue
        url = _PARAM.sub(lambda match: fill[match[1]], path)
        status = frozenset({403}) if (path, method) == ("/signin", "POST") else OK
        body: dict[str, Any] | None = {} if method == "POST" else None
        made.append(Probe((path, method), url, body, owner=status))
    return made


def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def mcp_probes(seed: Planted) -> list[Probe]:
    """/mcp: JSON-RPC over one POST each (stateless), every tool aimed at alice's data."""
    m, mcp = seed.markers, ("/mcp", "*")
    p1, p2, t1 = seed.p_secret, seed.p_sensitive, seed.t_secret
    addr_private, addr_team = f"@{OWNER}/{PRIVATE}", f"@{OWNER}/{TEAM}"
    client = {"name": "adversary", "version": "0"}
    initialize = rpc(
        "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}
    )

    def tool(name: str, **arguments: Any) -> dict[str, Any]:
        return rpc("tools/call", {"name": name, "arguments": arguments})

    def reading(url: str, body: dict[str, Any], **how: Any) -> Probe:
        return Probe(mcp, url, body, scope=READ, **how)

    def writing(url: str, body: dict[str, Any], **how: Any) -> Probe:
        return Probe(mcp, url, body, scope=WRITE, mutates=True, **how)

    return [
        Probe(mcp, "/mcp#initialize", initialize, scope=ANY_KEY),
        reading(
            "/mcp#get-private",
            tool("memory_get", id=p1),
            target="private",
            refusal_is_error=True,
            shows="private",
        ),
        reading(
            "/mcp#get-sensitive",
            tool("memory_get", id=p2),
            target="private",
            refusal_is_error=True,
            shows="sensitive",
        ),
        reading(
            "/mcp#get-internal",
            tool("memory_get", id=seed.internal_memory),
            target="private",
            refusal_is_error=True,
        ),
        reading(
            "/mcp#get-team",
            tool("memory_get", id=t1),
            target="team",
            via="read",
            refusal_is_error=True,
            shows="team",
        ),
        reading(
            "/mcp#recall-private",
            tool("memory_recall", query=m.private, namespace=PRIVATE),
            target="private",
            shows="private",
        ),
        reading(
            "/mcp#recall-address",
            tool("memory_recall", query=m.private, namespace=addr_private),
            target="private",
        ),
        reading(
            "/mcp#recall-team",
            tool("memory_recall", query=f"{m.team} AWS", namespace=addr_team, explain=True),
            target="team",
            via="read",
            shows="team",
            owner_sees=False,
        ),
        reading("/mcp#recall-own", tool("memory_recall", query=f"{m.private} {m.team} {m.sensitive}")),
        reading(
            "/mcp#list-private", tool("memory_list", namespace=PRIVATE), target="private", shows="private"
        ),
        reading(
            "/mcp#list-team",
            tool("memory_list", namespace=addr_team),
            target="team",
            via="read",
            shows="team",
            owner_sees=False,
        ),
        reading(f"/mcp?namespace={addr_private}", tool("memory_list"), target="private"),
        writing(
            "/mcp#store-private",
            tool("memory_store", memories=[{"content": "bob was here"}], namespace=addr_private),
            target="private",
            refusal_is_error=True,
            phase=1,
        ),
        writing(
            "/mcp#store-team",
            tool("memory_store", memories=[{"content": "bob was here via mcp"}], namespace=addr_team),
            target="team",
            via="write",
            refusal_is_error=True,
            phase=1,
        ),
        writing(
            "/mcp#update-private",
            tool("memory_update", id=p1, content="hijacked by bob"),
            target="private",
            refusal_is_error=True,
            phase=1,
        ),
        writing(
            "/mcp#update-team",
            tool("memory_update", id=t1, importance=0.05),
            target="team",
            via="write",
            refusal_is_error=True,
            phase=1,
        ),
        writing(
            "/mcp#link-private",
            tool("memory_link", id=p1, kind="see-also", target=p2),
            target="private",
            refusal_is_error=True,
            phase=1,
        ),
        writing(
            "/mcp#store-superseding-private",
            tool("memory_store", memories=[{"content": "bob was here: newer", "supersedes": [p1]}]),
            target="private",
            refusal_is_error=True,
            phase=1,
        ),
        reading(
            "/mcp#recall-superseded-private",
            tool("memory_recall", query=m.private, namespace=PRIVATE, include_superseded=True),
            target="private",
            shows="private",
        ),
        writing(
            "/mcp#forget-private",
            tool("memory_forget", id=p1),
            target="private",
            refusal_is_error=True,
            phase=2,
        ),
        writing(
            "/mcp#forget-team",
            tool("memory_forget", id=t1),
            target="team",
            via="write",
            refusal_is_error=True,
            phase=2,
        ),
    ]


# ---------------------------------------------------------------------------------------------
# The oracle: what each actor may get for each probe.


@dataclass(frozen=True, slots=True)
class Expected:
    statuses: frozenset[int]
    markers: frozenset[str] = frozenset()
    """Markers the answer may hold."""
    shows: str | None = None
    """A marker a 2xx answer must hold."""
    empty: bool = False
    """The answer must be an empty JSON object (the hook's refusal)."""
    lands: str | None = None
    """The path the answer must come from, after the redirects the client followed (a UI page
    without a session ends on the sign-in page)."""
    tool_error: bool = False
    """The answer must be an MCP tool error (`result.isError`)."""


NO_KEY = Expected(frozenset({401}))
"""Every route but the public ones, MCP included, for a missing, unknown, revoked or expired key."""


def refused(cls: RouteClass, statuses: frozenset[int], error: bool = True) -> Expected:
    """A refusal as each kind of route answers it: the hook with an empty `{}` (never an error a
    person would see), MCP with a tool result (an error, where the probe says so), REST with `statuses`."""
    if cls.kind == "hook":
        return Expected(OK, empty=True)
    if cls.kind == "mcp":
        return Expected(OK, tool_error=error)
    return Expected(statuses)


FORBIDDEN = frozenset({403})


def expected(actor: Actor, cls: RouteClass, probe: Probe) -> Expected | None:
    """What `actor` may get for `probe`; None: not sent (the owner's own legitimate writes)."""
    if cls.kind == "public":
        return Expected(probe.owner)
    if cls.kind == "ui":
        return Expected(probe.owner, lands="/signin")
    if actor.kind == "nobody" and cls.kind == "hook":
        return Expected(OK, empty=True)  # a hook never answers an error a person would see
    if actor.kind == "nobody" or cls.kind == "metrics":
        return NO_KEY
    scope, mutates = probe.scope or cls.scope, cls.mutates or probe.mutates
    if actor.kind == "owner":
        if scope != ANY_KEY and scope != actor.scope:
            return refused(cls, FORBIDDEN)
        if mutates:
            return None
        allowed = CANARIES | (CREDENTIALS if cls.reveals_credentials else frozenset())
        return Expected(probe.owner, frozenset(allowed), probe.shows if probe.owner_sees else None)
    if probe.target == "none":
        return Expected(OK, empty=cls.kind == "hook")
    if probe.target == "private" or probe.via == "owner" or actor.share not in ("read", "write"):
        return refused(cls, probe.refused, probe.refusal_is_error)
    if probe.via == "write" and actor.share == "read":
        return refused(cls, FORBIDDEN)
    return Expected(probe.granted, frozenset({"team"}), probe.shows)


# ---------------------------------------------------------------------------------------------
# The walk.


@dataclass
class Tally:
    attempts: int = 0
    skipped: int = 0
    leaks: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    blind: list[str] = field(default_factory=list)
    """Answers that should have shown alice's data and did not: the walk did not reach it."""
    changes: list[str] = field(default_factory=list)
    probed: set[tuple[str, str]] = field(default_factory=set)
    server_errors: int = 0
    revealed: int = 0
    """Answers that opened sealed originals (each must have left a `secret_reads` row)."""

    def summary(self) -> str:
        return (
            f"{self.attempts} attempts ({self.skipped} owner writes not sent), {len(self.leaks)} leaks, "
            f"{self.server_errors} 5xx, "
            f"{len(self.unexpected)} unexpected answers, {len(self.blind)} answers that missed the data "
            f"they should show, {len(self.changes)} changes to alice's data"
        )

    def report(self) -> str:
        lines = [self.summary()]
        for title, items in (
            ("leaks", self.leaks),
            ("unexpected", self.unexpected),
            ("blind", self.blind),
            ("changes", self.changes),
        ):
            lines += [f"{title}: {item}" for item in items[:15]]
        return "\n".join(lines)


def judge(
    tally: Tally, markers_of: Markers, actor: Actor, probe: Probe, want: Expected, response: httpx.Response
) -> None:
    where = f"[{actor.name}] {probe.describe()} -> {response.status_code}"
    tally.attempts += 1
    tally.probed.add(probe.route)
    tally.server_errors += response.status_code >= 500
    tally.revealed += response.is_success and ROUTES.get(probe.route) == SECRETS
    markers = markers_of.found_in(answer_text(response))
    if markers - want.markers:
        tally.leaks.append(f"{where}: {sorted(markers - want.markers)} in {response.text[:300]!r}")
    if response.status_code not in want.statuses:
        tally.unexpected.append(f"{where}, expected {sorted(want.statuses)}: {response.text[:300]!r}")
    elif want.empty and response.json() != {}:
        tally.unexpected.append(f"{where}, expected an empty {{}}: {response.text[:300]!r}")
    elif want.tool_error and response.json().get("result", {}).get("isError") is not True:
        tally.unexpected.append(f"{where}, expected a tool error: {response.text[:300]!r}")
    elif want.lands is not None and response.url.path != want.lands:
        tally.unexpected.append(f"{where}, expected to end on {want.lands}, ended on {response.url.path}")
    elif want.shows is not None and response.is_success and want.shows not in markers:
        tally.blind.append(f"{where}: no {want.shows} marker in {response.text[:300]!r}")


async def send(client: Client, actor: Actor, probe: Probe) -> httpx.Response:
    url = probe.url.split("#", 1)[0]  # a fragment only tells probes apart
    headers: Headers = dict(actor.headers)
    if probe.route[0] == "/mcp":
        headers["Accept"] = "application/json, text/event-stream"
    return await client.request(probe.method, url, json=probe.body, headers=headers)


@pytest.fixture
async def walked(settings: Settings, embedder: LocalEmbedder) -> AsyncIterator[Client]:
    """The app with rate limits off, credentials sealed under a key, a roomy hook budget, and
    /metrics served (behind its own token). The hooks' per-session ledger is off: the walk sends one
    hook body as each actor in turn to see what each may see, and a session's ledger would leave out
    the second time what the first was given (tests/test_session_ledger.py pins the ledger)."""
    configured = settings.model_copy(
        update={
            "auth": AuthSettings(rate_limits=False),
            "secrets": sealing_settings(),
            "hooks": HookSettings(budget_ms=10_000, ledger_ttl_hours=0),
            "metrics": MetricsSettings(token=SecretStr(METRICS_TOKEN)),
        }
    )
    # MCP's transport checks the Host header against its allowed hosts (127.0.0.1 by default)
    app = create_app(configured, embedder=embedder)
    async with AsyncTestClient(app=app, base_url="http://127.0.0.1:8080") as client:
        yield client


async def test_every_route_is_classified_and_probed(walked: Client, conn: asyncpg.Connection) -> None:
    served = served_routes(walked.app)
    unclassified = sorted(r for r in served if route_class(*r) is None)
    assert not unclassified, f"routes this suite does not know: classify and probe them: {unclassified}"
    stale = sorted(set(ROUTES) - served)
    assert not stale, f"classified routes the app no longer serves: {stale}"

    owner, other = await setup_keys(conn)
    seed = await plant(walked, conn, owner, other)
    all_probes = [*probes(seed), *generic_probes(served, seed), *ui_probes(served, seed), *mcp_probes(seed)]
    probed = {p.route for p in all_probes}
    assert not served - probed, f"routes without a probe: {sorted(served - probed)}"


async def arrange_share(client: Client, owner: Headers, state: Share) -> None:
    """Put alice's share of `team` with bob in `state` (alice's harness key, not an actor)."""
    if state in ("read", "write"):
        body = {"namespace": TEAM, "user": OTHER, "permission": state}
        response = await client.post("/v1/shares", json=body, headers=owner)
        assert response.status_code in (200, 201), response.text
    elif state == "revoked":
        response = await client.delete(f"/v1/shares?namespace={TEAM}&user={OTHER}", headers=owner)
        assert response.status_code == 204, response.text


async def test_no_actor_reaches_what_is_not_theirs_on_any_route(
    walked: Client, conn: asyncpg.Connection, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    client = walked
    owner, other = await setup_keys(conn)
    seed = await plant(client, conn, owner, other)
    served = served_routes(client.app)
    catalogue = sorted(
        [*probes(seed), *generic_probes(served, seed), *ui_probes(served, seed), *mcp_probes(seed)],
        key=lambda p: p.phase,
    )
    shares: tuple[Share, ...] = ("none", "read", "write", "revoked")
    actors = [
        *await keyless_actors(conn),
        *await single_scope_actors(conn),
        *(Actor(f"{OTHER}, share {state}", "other", other, share=state) for state in shares),
    ]

    tally = Tally()
    for actor in actors:  # in order: bob's share goes none → read → write → revoked
        await arrange_share(client, owner, actor.share)
        before = await snapshot(conn, seed.owner_id)
        for probe in catalogue:
            cls = route_class(*probe.route)
            assert cls is not None, probe.route
            want = expected(actor, cls, probe)
            if want is None:
                tally.skipped += 1
                continue
            judge(tally, seed.markers, actor, probe, want, await send(client, actor, probe))
        await drain(client)
        after = await snapshot(conn, seed.owner_id)
        if actor.share == "write":  # bob may change `team` now; nothing else
            before, after = outside(before, TEAM), outside(after, TEAM)
        tally.changes += [f"[{actor.name}] {section}" for section in changed_sections(before, after)]

    # what the walk left in the metrics (route templates, counts) names no data of alice's, and the
    # server's logs hold no credential, whoever asked
    scrape = await client.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    assert scrape.status_code == 200, scrape.text
    if in_metrics := seed.markers.found_in(scrape.text):
        tally.leaks.append(f"/metrics holds {sorted(in_metrics)}")
    logged = "\n".join(record.getMessage() for record in caplog.records)
    if in_logs := seed.markers.found_in(logged) & CREDENTIALS:
        tally.leaks.append(f"the logs hold {sorted(in_logs)}")
    # every answer that opened originals left its audit row, and no other answer did
    reads = await conn.fetch("SELECT u.name, r.* FROM secret_reads r JOIN users u ON u.id = r.user_id")
    tally.changes += [f"secret_reads row of another user: {dict(r)}" for r in reads if r["name"] != OWNER]
    if len(reads) != tally.revealed:
        tally.changes.append(
            f"{len(reads)} secret_reads rows for {tally.revealed} answers that opened originals"
        )
    assert not served - tally.probed, f"routes never probed: {sorted(served - tally.probed)}"
    assert not (tally.leaks or tally.unexpected or tally.blind or tally.changes), tally.report()
    assert tally.attempts > 500, tally.summary()
    print(tally.summary())
