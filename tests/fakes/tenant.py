"""A tenant worth attacking: alice's memories seeded with canaries and credentials, the actors
that go after them, and what "alice's data is unchanged" means in rows.

Every string alice stores carries a canary that no other text in the database holds, so finding
one in an answer proves that answer came from her data; two memories hold credentials that the
write path redacts into placeholders and seals (an encryption key is configured), so the clear
credential may appear in exactly one kind of answer: her own `secrets:read` read of that memory.
"""

from __future__ import annotations

import asyncio
import base64
import os
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import asyncpg
import httpx
from litestar import Litestar
from litestar.testing import AsyncTestClient
from pydantic import SecretStr

from app.auth.scopes import ADMIN, ALL_SCOPES, READ, WRITE
from app.auth.service import create_key, get_or_create_user, revoke_key
from app.jobs import JobWorker
from app.secrets import SecretSettings

Client = AsyncTestClient[Litestar]
Headers = dict[str, str]

OWNER, OTHER, THIRD = "alice", "bob", "mallory"
PRIVATE, TEAM = "private", "team"
"""Alice's namespaces: `private` is never shared; `team` is shared with bob in some actor states."""

GITHUB = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AWS_ID = "AKIAQ3EGRZ7WXMPLT4NV"


def _canary(kind: str) -> str:
    # lowercase letters and hex digits only: the concept extractor and the text index keep it whole
    return f"kanary{kind}{uuid.uuid4().hex[:12]}"


@dataclass(frozen=True, slots=True)
class Markers:
    """What must not leak. Canaries are matched case-insensitively (concept names are lowercased)."""

    private: str = field(default_factory=lambda: _canary("prv"))
    sensitive: str = field(default_factory=lambda: _canary("sns"))
    deleted: str = field(default_factory=lambda: _canary("del"))
    team: str = field(default_factory=lambda: _canary("tem"))
    github: str = GITHUB
    aws: str = AWS_ID

    def named(self) -> dict[str, str]:
        return {
            "private": self.private,
            "sensitive": self.sensitive,
            "deleted": self.deleted,
            "team": self.team,
            "github": self.github,
            "aws": self.aws,
        }

    def found_in(self, text: str) -> set[str]:
        """The names of the markers `text` holds."""
        lowered = text.lower()
        return {name for name, marker in self.named().items() if marker.lower() in lowered}


CANARIES = frozenset({"private", "sensitive", "deleted", "team"})
CREDENTIALS = frozenset({"github", "aws"})


def answer_text(response: httpx.Response) -> str:
    """Everything an answer tells its caller: body and header values."""
    return response.text + "\n" + "\n".join(f"{k}: {v}" for k, v in response.headers.items())


@dataclass(frozen=True, slots=True)
class Planted:
    """Alice's seeded rows, by role, and a concept id or two per namespace (and one of bob's)."""

    markers: Markers
    owner_id: int
    p_secret: int  # private: canary + GitHub token in content, canary in every other text field
    p_sensitive: int  # private, is_sensitive
    p_deleted: int  # private, soft-deleted
    t_secret: int  # team: canary + AWS key id
    t_other: int  # team: canary
    private_concepts: tuple[int, int]
    team_concepts: tuple[int, int]
    bob_concept: int
    bob_memory: int  # bob's own, in his `bob-own`: the source he links from
    internal_memory: int  # the bigint row ids the API keeps to itself: guessable, so probed too
    internal_concept: int


async def drain(client: Client) -> None:
    """Run the jobs requests left behind (concept indexing), on the app's own event loop."""
    jobs: JobWorker = client.app.state.jobs
    await asyncio.to_thread(lambda: client.blocking_portal.call(jobs.run_pending))


async def _stored(client: Client, headers: Headers, body: Mapping[str, Any]) -> int:
    response = await client.post("/v1/memories", json=dict(body), headers=headers)
    assert response.status_code == 201, response.text
    memory_id: int = response.json()["id"]
    return memory_id


async def _concepts(client: Client, headers: Headers, namespace: str, canary: str) -> list[int]:
    """Public ids of a namespace's concepts as the API names them, the canary's own concept first."""
    response = await client.get(f"/v1/graph/concepts?namespace={namespace}&limit=200", headers=headers)
    assert response.status_code == 200, response.text
    concepts = sorted(response.json(), key=lambda c: (c["name"] != canary, c["name"]))
    return [int(c["id"]) for c in concepts]


async def plant(client: Client, conn: asyncpg.Connection, owner: Headers, other: Headers) -> Planted:
    """Seed alice's data through the API (so it is redacted and sealed as any write is) and bob's
    own namespace; wait for concept indexing."""
    m = Markers()
    p_secret = await _stored(
        client,
        owner,
        {
            "content": f"Deploy notes {m.private}: CI pushes release tags with the token {GITHUB}",
            "namespace": PRIVATE,
            "category": "runbook",
            "tags": ["deploy", f"tag{m.private}"],
            "expanded_keywords": f"release {m.private}",
            "source": f"notes/{m.private}.md",
            "metadata": {"ticket": m.private},
        },
    )
    p_sensitive = await _stored(
        client,
        owner,
        {"content": f"The on-call pager pin is {m.sensitive}", "namespace": PRIVATE, "is_sensitive": True},
    )
    p_deleted = await _stored(
        client, owner, {"content": f"Old runbook {m.deleted} for the retired cluster", "namespace": PRIVATE}
    )
    deleted = await client.delete(f"/v1/memories/{p_deleted}", headers=owner)
    assert deleted.status_code == 204, deleted.text
    t_secret = await _stored(
        client,
        owner,
        {"content": f"Team {m.team} deploys to AWS as {AWS_ID} from the shared runner", "namespace": TEAM},
    )
    t_other = await _stored(
        client,
        owner,
        {"content": f"Team {m.team} reviews every Terraform plan before apply", "namespace": TEAM},
    )
    bob_memory = await _stored(
        client, other, {"content": "Bob keeps his own Grafana dashboards", "namespace": "bob-own"}
    )
    # a link in each namespace: a link list answer shows the memory at its other end
    for source, target in ((p_secret, p_sensitive), (t_secret, t_other)):
        linked = await client.post(
            f"/v1/memories/{source}/links", json={"kind": "see-also", "target": target}, headers=owner
        )
        assert linked.status_code == 201, linked.text
    await drain(client)

    private = await _concepts(client, owner, PRIVATE, m.private)
    team = await _concepts(client, owner, TEAM, m.team)
    bobs = await _concepts(client, other, "bob-own", "grafana")
    assert len(private) >= 2 and len(team) >= 2 and bobs, (private, team, bobs)
    owner_id = await conn.fetchval("SELECT id FROM users WHERE name = $1", OWNER)
    return Planted(
        markers=m,
        owner_id=owner_id,
        p_secret=p_secret,
        p_sensitive=p_sensitive,
        p_deleted=p_deleted,
        t_secret=t_secret,
        t_other=t_other,
        private_concepts=(private[0], private[1]),
        team_concepts=(team[0], team[1]),
        bob_concept=bobs[0],
        bob_memory=bob_memory,
        internal_memory=await conn.fetchval(
            "SELECT id FROM memories WHERE strpos(content, $1) > 0 AND NOT is_sensitive", m.private
        ),
        internal_concept=await conn.fetchval("SELECT id FROM concepts WHERE name = $1", m.private),
    )


def sealing_settings() -> SecretSettings:
    """Redaction with a key configured, so originals are sealed (and could leak)."""
    key = base64.b64encode(os.urandom(32)).decode()
    return SecretSettings(keys={"adversarial": SecretStr(key)})


ActorKind = Literal["nobody", "owner", "other"]
Share = Literal["none", "read", "write", "revoked"]


@dataclass(frozen=True, slots=True)
class Actor:
    """Who sends the walk's requests. `nobody`: no working key (401). `owner`: alice with a key of
    one scope. `other`: bob, whose key has every scope (only ownership and shares stop him), with
    `share` the state of alice's `team` share."""

    name: str
    kind: ActorKind
    headers: Headers
    scope: str | None = None
    share: Share = "none"


def bearer(key: str) -> Headers:
    return {"Authorization": f"Bearer {key}"}


async def key_with(conn: asyncpg.Connection, user: str, scopes: Iterable[str]) -> tuple[int, str]:
    await get_or_create_user(conn, user)
    created = await create_key(conn, user, scopes=tuple(scopes))
    return created.id, created.key


async def keyless_actors(conn: asyncpg.Connection) -> list[Actor]:
    """No key, a key that never existed, alice's revoked key and alice's expired key (both with
    every scope: what stops them must be the key's state, not its scopes)."""
    _, revoked = await key_with(conn, OWNER, ALL_SCOPES)
    assert await revoke_key(conn, revoked)
    expired_id, expired = await key_with(conn, OWNER, ALL_SCOPES)
    await conn.execute(
        "UPDATE api_keys SET expires_at = $2 WHERE id = $1",
        expired_id,
        datetime.now(UTC) - timedelta(minutes=1),
    )
    return [
        Actor("no key", "nobody", {}),
        Actor("garbage key", "nobody", bearer("mem_" + uuid.uuid4().hex + uuid.uuid4().hex)),
        Actor("revoked key", "nobody", bearer(revoked)),
        Actor("expired key", "nobody", bearer(expired)),
    ]


async def single_scope_actors(conn: asyncpg.Connection) -> list[Actor]:
    """Alice with a key of exactly one scope, for each scope."""
    actors = []
    for scope in ALL_SCOPES:
        _, key = await key_with(conn, OWNER, (scope,))
        actors.append(Actor(f"alice {scope}-only key", "owner", bearer(key), scope=scope))
    return actors


async def setup_keys(conn: asyncpg.Connection) -> tuple[Headers, Headers]:
    """Alice's harness key (read, write, admin: seeds and manages shares, never an actor) and
    bob's key with every scope; mallory exists, to be named in share attempts."""
    _, owner = await key_with(conn, OWNER, (READ, WRITE, ADMIN))
    _, other = await key_with(conn, OTHER, ALL_SCOPES)
    await get_or_create_user(conn, THIRD)
    return bearer(owner), bearer(other)


Snapshot = dict[str, list[tuple[Any, ...]]]

_SNAPSHOT: dict[str, str] = {
    "memories": """
        SELECT n.name, m.id, m.content, m.category, m.tags, m.importance, m.expanded_keywords,
               m.is_sensitive, m.has_secrets, m.source, m.metadata::text, m.content_hash,
               m.embedding::text, m.embedding_model, m.created_at, m.updated_at, m.deleted_at,
               m.valid_from, m.valid_to
        FROM memories m JOIN namespaces n ON n.id = m.namespace_id
        WHERE n.user_id = $1 ORDER BY m.id""",
    "namespaces": "SELECT name, id, created_at FROM namespaces WHERE user_id = $1 ORDER BY id",
    "shares": """
        SELECT n.name, s.namespace_id, s.grantee_id, s.permission, s.created_at
        FROM namespace_shares s JOIN namespaces n ON n.id = s.namespace_id
        WHERE n.user_id = $1 OR s.grantee_id = $1 ORDER BY 2, 3""",
    "sealed secrets": """
        SELECT n.name, s.memory_id, s.ordinal, s.kind, s.key_id, s.nonce, s.ciphertext, s.created_at
        FROM memory_secrets s JOIN memories m ON m.id = s.memory_id
        JOIN namespaces n ON n.id = m.namespace_id
        WHERE n.user_id = $1 ORDER BY 2, 3""",
    "concepts": """
        SELECT n.name, c.id, c.name, c.display_name, c.aliases, c.kind, c.doc_freq
        FROM concepts c JOIN namespaces n ON n.id = c.namespace_id
        WHERE n.user_id = $1 ORDER BY c.id""",
    "concept links": """
        SELECT n.name, mc.memory_id, mc.concept_id
        FROM memory_concepts mc JOIN memories m ON m.id = mc.memory_id
        JOIN namespaces n ON n.id = m.namespace_id
        WHERE n.user_id = $1 ORDER BY 2, 3""",
    "concept edges": """
        SELECT n.name, e.id, e.source_id, e.target_id, e.relation, e.weight, e.evidence_memory_ids
        FROM concept_edges e JOIN namespaces n ON n.id = e.namespace_id
        WHERE n.user_id = $1 ORDER BY e.id""",
    "memory links": """
        SELECT n.name, l.id, l.source_id, l.target_id, l.kind, l.origin, l.reason,
               l.target_valid_to_before, l.created_at
        FROM memory_links l JOIN memories m ON m.id = l.source_id OR m.id = l.target_id
        JOIN namespaces n ON n.id = m.namespace_id
        WHERE n.user_id = $1 ORDER BY 2, 1""",
    "keys": """
        SELECT id, prefix, scopes, expires_at, revoked_at, label
        FROM api_keys WHERE user_id = $1 ORDER BY id""",
}
"""Alice's data, section by section; each row starts with its namespace's name where it has one.
Keys are compared without `last_used_at` (using a key updates it); `secret_reads` is checked
separately (her own `secrets:read` reads add rows on purpose)."""

NAMESPACED = frozenset(
    {"memories", "sealed secrets", "concepts", "concept links", "concept edges", "memory links"}
)


async def snapshot(conn: asyncpg.Connection, owner_id: int) -> Snapshot:
    return {
        section: [tuple(row) for row in await conn.fetch(query, owner_id)]
        for section, query in _SNAPSHOT.items()
    }


def outside(snap: Snapshot, namespace: str) -> Snapshot:
    """The snapshot without the rows of `namespace` (one someone else may rightly write into)."""
    return {
        section: [row for row in rows if section not in NAMESPACED or row[0] != namespace]
        for section, rows in snap.items()
    }


def changed_sections(before: Snapshot, after: Snapshot) -> list[str]:
    return [section for section in before if before[section] != after[section]]
