"""Look-alikes: what a coding agent's memories are full of and a careless detector redacts.

Commit SHAs, UUIDs, content hashes, base64 data, version strings, long identifiers, and
documentation placeholders in exactly the places real credentials go (`OPENAI_API_KEY=YOUR_API_KEY`):
memories with no credential, generated from the same seeded `random.Random` as the credentials.
"""

from __future__ import annotations

import base64
import random
from collections.abc import Callable

from memoria_bench.secrets.alphabet import B64, HEX, HOSTS, SERVICES, USERS, Case, pick


def _uuid(rng: random.Random) -> str:
    h = pick(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rng.choice('89ab')}{h[17:20]}-{h[20:]}"


def _version(rng: random.Random) -> str:
    v = f"{rng.randrange(0, 30)}.{rng.randrange(0, 40)}.{rng.randrange(0, 20)}"
    return v + rng.choice(["", "-rc.1", "+build.7", ".post1", "b2", f"-{pick(rng, HEX, 7)}"])


def _camel(rng: random.Random) -> str:
    words = [
        "Abstract",
        "Singleton",
        "Proxy",
        "Factory",
        "Bean",
        "Configuration",
        "Manager",
        "Payment",
        "Settlement",
        "Request",
        "Handler",
        "Adapter",
        "Registry",
        "Provider",
        "Resolver",
        "Service",
    ]
    return "".join(rng.sample(words, rng.randrange(4, 8)))


def _snake(rng: random.Random) -> str:
    words = [
        "test",
        "store",
        "rejects",
        "content",
        "over",
        "the",
        "limit",
        "with",
        "recall",
        "returns",
        "sensitive",
        "memories",
        "only",
        "when",
        "asked",
        "api",
        "key",
        "token",
        "secret",
        "rotation",
    ]
    return "_".join(rng.sample(words, rng.randrange(5, 9)))


# family -> a generator of one non-credential memory
LOOKALIKES: dict[str, Callable[[random.Random], str]] = {
    "commit-sha": lambda r: r.choice(
        [
            "Fixed in commit {h}, see the PR description.",
            "git cherry-pick {h} onto release/2.4",
            "The regression started at {h7}..{h}",
            "Deployed {svc} at revision {h}",
        ]
    ).format(h=pick(r, HEX, 40), h7=pick(r, HEX, 7), svc=r.choice(SERVICES)),
    "uuid": lambda r: r.choice(
        [
            "request id {u} failed with 502 at the gateway",
            "tenant_id: {u} is the acme sandbox",
            "The trace {u} shows the slow recall",
            "Namespace {u} belongs to the eval runs",
        ]
    ).format(u=_uuid(r)),
    "content-hash": lambda r: r.choice(
        [
            "image digest sha256:{h} is the last good build",
            "checksum {h} for the release tarball",
            "content_hash={h} collides with nothing",
            "The model file's sha256 is {h}",
            "etag: {h40}",
        ]
    ).format(h=pick(r, HEX, 64), h40=pick(r, HEX, 40)),
    "base64-data": lambda r: r.choice(
        [
            "The favicon is inlined as data:image/png;base64,{b}",
            "Fixture payload (base64): {b}",
            "The protobuf in the failing test decodes from {b}",
        ]
    ).format(b=base64.b64encode(bytes(r.randrange(256) for _ in range(r.randrange(60, 300)))).decode()),
    "version": lambda r: r.choice(
        [
            "Bumped pydantic to {v} and litestar to {v2}",
            "node {v} is what CI runs; {v2} breaks the build",
            "pip install torch=={v} first, then the rest",
            "The {svc} image is registry.internal/{svc}:{v}",
        ]
    ).format(v=_version(r), v2=_version(r), svc=r.choice(SERVICES)),
    "identifier": lambda r: r.choice(
        [
            "{c} is where the retry logic lives",
            "Rename {s} before the release",
            "The flaky one is tests/test_secrets.py::{s}",
            "com.acme.{svc}.internal.{c} handles the callbacks",
        ]
    ).format(c=_camel(r), s=_snake(r), svc=r.choice(SERVICES)),
    "placeholder": lambda r: r.choice(
        [
            "set OPENAI_API_KEY=YOUR_API_KEY in .env.example",
            "password: <your-password>",
            "token=${GITHUB_TOKEN} is injected by the workflow",
            "api_key: xxxxxxxxxxxxxxxxxxxxxxxx",
            "AWS_SECRET_ACCESS_KEY=<secret> goes in the runner's env, never in git",
            "The README shows ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx as the token format",
            "postgres://user:password@localhost:5432/app is the local default",
            "DB_PASSWORD=${DB_PASSWORD} comes from the Kubernetes secret",
            "secret: changeme (only in the docker-compose example)",
            "Authorization: Bearer $MEMORIA_KEY",
            "export STRIPE_SECRET_KEY=sk_live_REPLACE_ME",
            "client_secret: {{ .Values.oauth.clientSecret }}",
            "api_key = os.environ['VOYAGE_API_KEY']",
            "token: ${{ secrets.NPM_TOKEN }}",
            "SECRET_KEY = settings.SECRET_KEY",
            "password = getpass.getpass()",
            "Use sk-... from the dashboard, never commit it",
            "ANTHROPIC_API_KEY=your-key-here",
            "password = var.db_password in the terraform module",
            "api_key: <redacted>",
            "STRIPE_PUBLISHABLE_KEY=pk_live_ is fine to ship to the browser",
        ]
    ),
    "keyword-prose": lambda r: r.choice(
        [
            "the token budget is {n} per request",
            "max_tokens: {n} keeps answers short",
            "password reset emails go through SES in {svc}",
            "api_key_id: {n} is the vendor's reference for our account",
            "secret_name: {svc}-db-credentials in the {svc} namespace",
            "TOKEN_TTL={n} seconds for refresh tokens",
            "The password is stored in 1Password under '{svc} staging'",
            "The secret key rotation runs every {n} days",
            "primary key: (namespace_id, content_hash)",
            "Keys are rotated by the platform team; ask in #security",
            "token: the JWT expires after {n} seconds",
            "credentials: see the vault path secret/data/{svc}",
            "password: min 12 characters, one digit",
            "The secret for {svc} is rotated weekly by the operator",
            "api key is in the team vault, not here",
        ]
    ).format(n=r.choice([60, 90, 512, 2048, 3600, 4096]), svc=r.choice(SERVICES)),
    "url": lambda r: r.choice(
        [
            "postgres://{user}@{host}:5432/app has no password; it uses the pgpass file",
            "The dashboard is at https://grafana.internal/d/{h7}/{svc}?orgId=1",
            "Clone from git@github.com:acme/{svc}.git",
            "PR https://github.com/acme/{svc}/pull/{n} fixes it",
            "ping ops@acme.dev about {svc}",
            "Sentry DSN https://{h7}{h7}@o{n}.ingest.sentry.io/{n}",
            "sftp://{user}@{host}/uploads takes the nightly export",
        ]
    ).format(
        user=r.choice(USERS),
        host=r.choice(HOSTS),
        h7=pick(r, HEX, 7),
        svc=r.choice(SERVICES),
        n=r.randrange(100, 9999),
    ),
    "k8s-name": lambda r: r.choice(
        [
            "pod pa-{svc}-reconciler-{h10}-{h5} was OOM-killed",
            "kubectl logs sk-{svc}-worker-{h10}-{h5} shows the retry",
            "branch feature/pa-{n}-secret-redaction-and-key-rotation is ready",
            "The {svc} job runs as gh-actions-runner-{h10}-{h5}",
        ]
    ).format(
        svc=r.choice(SERVICES),
        h10=pick(r, HEX, 10),
        h5=pick(r, "bcdfghjklmnpqrstvwxz2456789", 5),
        n=r.randrange(100, 9999),
    ),
    "public-key": lambda r: r.choice(
        [
            "ci's public key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{b} ci@acme",
            "Pin the server certificate:\n-----BEGIN CERTIFICATE-----\n{b}\n-----END CERTIFICATE-----",
            "-----BEGIN PUBLIC KEY-----\n{b}\n-----END PUBLIC KEY----- verifies the webhook signatures",
            "The deploy key fingerprint is SHA256:{b43}",
        ]
    ).format(
        b=base64.b64encode(bytes(r.randrange(256) for _ in range(r.randrange(32, 120)))).decode(),
        b43=pick(r, B64, 43),
    ),
}


def lookalike_cases(rng: random.Random, n: int) -> list[Case]:
    """`n` memories holding no credential, the families in turn."""
    families = list(LOOKALIKES)
    return [Case(LOOKALIKES[f](rng), family=f) for f in (families[i % len(families)] for i in range(n))]
