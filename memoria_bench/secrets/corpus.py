"""A seeded corpus of memory-like sentences: credentials of many kinds, and look-alikes that are not.

Every credential is generated here from a seeded `random.Random` at run time: random characters in
the provider's format (prefix, alphabet, length), so it matches what a detector must catch while
being no one's credential (GitHub's checksum suffix, AWS's account encoding, Stripe's and Slack's
server-side records never line up with random characters). Nothing real is, or needs to be, in
this file. Each case records where the credential is in its sentence, so a benchmark can check that
the whole value, not a fragment, was redacted.

The look-alikes are what a coding agent's memories are full of and a careless detector redacts:
commit SHAs, UUIDs, content hashes, base64 data, version strings, long identifiers, and documentation
placeholders in exactly the places real credentials go (`OPENAI_API_KEY=YOUR_API_KEY`).
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
UPPER_ALNUM = string.ascii_uppercase + string.digits
BASE32 = string.ascii_uppercase + "234567"
HEX = "0123456789abcdef"
PASSWORD_CHARS = ALNUM + "!#%&*@^-_+=?"
URL_PASSWORD_CHARS = ALNUM + "-_.~"

HOSTS = ("db.internal", "pg-staging.corp", "10.0.3.17", "postgres.prod.svc", "cache.internal")
USERS = ("app", "deploy", "ci", "admin", "svc_memoria", "readonly")
SERVICES = ("billing", "search", "ingest", "auth", "payments", "reports", "notifier")


@dataclass(frozen=True, slots=True)
class Case:
    """One memory: `text`; for a credential, its kind and where it is (`text[start:end]`)."""

    text: str
    kind: str | None = None
    start: int = 0
    end: int = 0
    family: str = ""
    """The look-alike family of a negative (`commit-sha`, `uuid`, …); the kind of a positive."""

    @property
    def secret(self) -> str:
        return self.text[self.start : self.end]


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _jwt(rng: random.Random) -> str:
    header = {"alg": rng.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"}
    payload = {
        "sub": str(rng.randrange(10**6, 10**7)),
        "name": rng.choice(["ci-bot", "alice", "deploy"]),
        "iat": rng.randrange(1_700_000_000, 1_800_000_000),
        "scope": rng.choice(["read", "write admin", "repo"]),
    }
    signature = bytes(rng.randrange(256) for _ in range(32))
    return ".".join(
        (
            _b64url(json.dumps(header).encode()),
            _b64url(json.dumps(payload).encode()),
            _b64url(signature),
        )
    )


def _private_key(rng: random.Random) -> str:
    label = rng.choice(["RSA ", "EC ", "OPENSSH ", ""])
    body = base64.b64encode(bytes(rng.randrange(256) for _ in range(rng.randrange(180, 600)))).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return f"-----BEGIN {label}PRIVATE KEY-----\n" + "\n".join(lines) + f"\n-----END {label}PRIVATE KEY-----"


# kind -> a generator of one credential value
GENERATORS: dict[str, Callable[[random.Random], str]] = {
    "aws-access-key": lambda r: r.choice(["AKIA", "ASIA"]) + _pick(r, BASE32, 16),
    "aws-secret-key": lambda r: _pick(r, B64, 40),
    "github-token": lambda r: (
        r.choice(["ghp_", "gho_", "ghs_", "ghu_"]) + _pick(r, ALNUM, 36)
        if r.random() < 0.7
        else "github_pat_" + _pick(r, UPPER_ALNUM, 22) + "_" + _pick(r, ALNUM, 59)
    ),
    "gitlab-token": lambda r: "glpat-" + _pick(r, B64URL, 20),
    "slack-token": lambda r: (
        f"{r.choice(['xoxb', 'xoxp'])}-{r.randrange(10**11, 10**12)}-{r.randrange(10**12, 10**13)}-"
        + _pick(r, ALNUM, 24)
    ),
    "slack-webhook": lambda r: (
        "https://hooks.slack.com/services/T"
        + _pick(r, UPPER_ALNUM, 8)
        + "/B"
        + _pick(r, UPPER_ALNUM, 10)
        + "/"
        + _pick(r, ALNUM, 24)
    ),
    "stripe-key": lambda r: (
        r.choice(["sk_live_", "rk_live_", "sk_test_"]) + _pick(r, ALNUM, r.choice([24, 99]))
    ),
    "openai-key": lambda r: (
        "sk-proj-" + _pick(r, B64URL, r.choice([48, 74, 156]))
        if r.random() < 0.6
        else "sk-" + _pick(r, ALNUM, 20) + "T3BlbkFJ" + _pick(r, ALNUM, 20)
    ),
    "anthropic-key": lambda r: "sk-ant-api03-" + _pick(r, B64URL, 93) + "AA",
    "voyage-key": lambda r: "pa-" + _pick(r, B64URL, 43),
    "google-api-key": lambda r: "AIza" + _pick(r, B64URL, 35),
    "npm-token": lambda r: "npm_" + _pick(r, ALNUM, 36),
    "huggingface-token": lambda r: "hf_" + _pick(r, ALNUM, 34),
    "sendgrid-key": lambda r: "SG." + _pick(r, B64URL, 22) + "." + _pick(r, B64URL, 43),
    "memoria-key": lambda r: "mem_" + _pick(r, B64URL, 43),
    "private-key": _private_key,
    "jwt": _jwt,
    "url-password": lambda r: _pick(r, URL_PASSWORD_CHARS, r.randrange(10, 25)),
    "bearer-token": lambda r: _pick(r, ALNUM + "-._~", r.randrange(32, 65)),
    "password": lambda r: _pick(r, PASSWORD_CHARS, r.randrange(10, 21)),
    "secret": lambda r: _pick(r, ALNUM, r.randrange(24, 49)),
}

# kind -> sentences; {s} is the credential, the other fields are filled at random
TEMPLATES: dict[str, tuple[str, ...]] = {
    "aws-access-key": (
        "The CI user's access key id is {s}; it belongs to the {svc} deploy role.",
        "export AWS_ACCESS_KEY_ID={s} before running terraform plan",
        "aws_access_key_id = {s} lives in the [{svc}] profile of ~/.aws/credentials",
        "Rotated the {svc} IAM key, new one: {s}",
        "boto3.client('s3', aws_access_key_id='{s}') in the backfill script",
    ),
    "aws-secret-key": (
        "Deploy with AWS_SECRET_ACCESS_KEY={s} in the CI env",
        "aws_secret_access_key = {s}",
        "The aws secret key is {s} (staging account, {svc} only)",
        'config: {{"aws_secret_access_key": "{s}", "region": "eu-west-1"}}',
        "AWS secret access key for the {svc} uploader: {s}",
    ),
    "github-token": (
        "Use {s} for the release bot (repo scope).",
        "GITHUB_TOKEN={s} is what the {svc} workflow uses to push tags",
        "gh auth login --with-token <<< {s}",
        "The PAT for mirroring {svc} is {s}, it expires in March",
        "git remote set-url origin https://x-access-token:{s}@github.com/acme/{svc}.git",
    ),
    "gitlab-token": (
        "GitLab deploy token for {svc}: {s}",
        "git clone https://oauth2:{s}@gitlab.com/acme/{svc}.git",
        "CI_JOB_TOKEN is not enough; use the project token {s} for the registry",
    ),
    "slack-token": (
        "The alerts bot posts with {s} to #ops",
        "SLACK_BOT_TOKEN={s} in the {svc} helm values",
        "slack user token (for the export script): {s}",
        "The {svc} bot was reinstalled; its token is now {s}",
    ),
    "slack-webhook": (
        "Incident notifications go to {s}",
        "The {svc} deploy job posts to the webhook {s} when it finishes",
    ),
    "stripe-key": (
        "Stripe key for {svc} checkout: {s}",
        "STRIPE_SECRET_KEY={s} must never reach the frontend bundle",
        "stripe.api_key = '{s}' in the reconciliation notebook",
        "Refunds for {svc} are issued with the restricted key {s}",
    ),
    "openai-key": (
        "OPENAI_API_KEY={s} for the summarizer",
        "The eval harness calls the API with {s}",
        "openai key for {svc}: {s} (project: evals)",
        'client = OpenAI(api_key="{s}")',
    ),
    "anthropic-key": (
        "ANTHROPIC_API_KEY={s} is set in the {svc} runner",
        "Claude calls from the triage bot use {s}",
        "anthropic.Anthropic(api_key='{s}') in the {svc} notebook",
    ),
    "voyage-key": (
        "Embeddings for {svc} use Voyage with VOYAGE_API_KEY={s}",
        "voyage key (rerank tests): {s}",
        "voyageai.Client(api_key='{s}') for the {svc} embeddings",
    ),
    "google-api-key": (
        "The maps widget loads with key={s} restricted to our domain",
        "GOOGLE_API_KEY={s} for the geocoding job in {svc}",
    ),
    "npm-token": (
        "Publish with NPM_TOKEN={s}",
        "//registry.npmjs.org/:_authToken={s} goes into the CI .npmrc",
        "npm automation token for @acme/{svc}: {s}",
    ),
    "huggingface-token": (
        "HF_TOKEN={s} to pull the gated model",
        "huggingface-cli login --token {s}",
    ),
    "sendgrid-key": (
        "Transactional mail for {svc} goes through SendGrid, key {s}",
        "SENDGRID_API_KEY={s} in the {svc} secrets",
    ),
    "memoria-key": (
        "MEMORIA_CLIENT__API_KEY={s} on the build box",
        "The hook authenticates with {s}",
        "memoria login stored {s} in ~/.config/memoria/key",
    ),
    "private-key": (
        "Deploy key for {svc} (read-only):\n{s}",
        "The TLS key of the staging ingress is\n{s}\nkeep it out of the repo",
    ),
    "jwt": (
        "Authorization: Bearer {s} works against staging until Friday",
        "A session cookie from the {svc} admin: session={s}",
        "Debugging 401s: the token {s} has the wrong audience",
    ),
    "url-password": (
        "the staging DB is postgres://{user}:{s}@{host}:5432/app",
        "DATABASE_URL=postgresql://{user}:{s}@{host}/{svc}",
        "redis://:{s}@{host}:6379/0 is the {svc} cache",
        "Mirror pushes go to https://{user}:{s}@git.internal/{svc}.git",
        "amqp://{user}:{s}@{host}:5672/%2f feeds the {svc} workers",
    ),
    "bearer-token": (
        "curl -H 'Authorization: Bearer {s}' https://api.internal/{svc}/health",
        "The {svc} API accepts Bearer {s} from the cron host",
        "headers = {{'Authorization': 'Bearer {s}'}}",
    ),
    "password": (
        "DB_PASSWORD={s} for the {svc} replica",
        "The admin password is {s} (staging only)",
        'password: "{s}" in the {svc} docker-compose override',
        "Jenkins login: admin / password={s}",
        "POSTGRES_PASSWORD={s} in the local .env",
        "The password for the {svc} admin console is {s}",
        "ssh pass: {s} (bastion, until the key rollout)",
        "MYSQL_ROOT_PASSWORD: '{s}' in the compose file",
    ),
    "secret": (
        "api_key={s} for the {svc} vendor API",
        "client_secret: {s}",
        "SECRET_KEY = '{s}' in the Django settings of {svc}",
        "The webhook secret for {svc} is {s}",
        "datadog api key: {s}",
        'access_token = "{s}"',
        "The {svc} vendor API key is {s}",
        "export SENTRY_AUTH_TOKEN={s}",
        "signing_key: {s}",
    ),
}


def _fill(rng: random.Random, template: str, value: str) -> Case:
    fields = {"user": rng.choice(USERS), "host": rng.choice(HOSTS), "svc": rng.choice(SERVICES)}
    head, _, tail = template.partition("{s}")
    before, after = head.format_map(fields), tail.format_map(fields)
    return Case(before + value + after, start=len(before), end=len(before) + len(value))


def secret_cases(rng: random.Random, n: int) -> list[Case]:
    """`n` memories holding one credential each, the kinds in turn."""
    kinds = list(GENERATORS)
    cases = []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        case = _fill(rng, rng.choice(TEMPLATES[kind]), GENERATORS[kind](rng))
        cases.append(Case(case.text, kind, case.start, case.end, kind))
    return cases


def _uuid(rng: random.Random) -> str:
    h = _pick(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rng.choice('89ab')}{h[17:20]}-{h[20:]}"


def _version(rng: random.Random) -> str:
    v = f"{rng.randrange(0, 30)}.{rng.randrange(0, 40)}.{rng.randrange(0, 20)}"
    return v + rng.choice(["", "-rc.1", "+build.7", ".post1", "b2", f"-{_pick(rng, HEX, 7)}"])


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
    ).format(h=_pick(r, HEX, 40), h7=_pick(r, HEX, 7), svc=r.choice(SERVICES)),
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
    ).format(h=_pick(r, HEX, 64), h40=_pick(r, HEX, 40)),
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
        h7=_pick(r, HEX, 7),
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
        h10=_pick(r, HEX, 10),
        h5=_pick(r, "bcdfghjklmnpqrstvwxz2456789", 5),
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
        b43=_pick(r, B64, 43),
    ),
}


def lookalike_cases(rng: random.Random, n: int) -> list[Case]:
    """`n` memories holding no credential, the families in turn."""
    families = list(LOOKALIKES)
    return [Case(LOOKALIKES[f](rng), family=f) for f in (families[i % len(families)] for i in range(n))]


PROSE = (
    "We deploy with Terraform and never run kubectl apply by hand. The staging cluster scales to zero "
    "at night, so the first request after 20:00 takes a few seconds. Recall runs lexical and dense "
    "legs in one statement; the graph leg is weighted 0.25. Migrations are hand-written SQL in "
    "migrations/versions, and schema.sql is regenerated after each one. "
)


def long_memory(rng: random.Random, chars: int = 4000, secret: Case | None = None) -> str:
    """A memory of at least `chars` characters (one piece more): prose and look-alikes, with
    `secret`'s text inside."""
    parts: list[str] = []
    size = 0
    while size < chars:
        piece = PROSE if rng.random() < 0.5 else lookalike_cases(rng, 1)[0].text + " "
        parts.append(piece)
        size += len(piece)
    if secret is not None:
        parts.insert(rng.randrange(len(parts) + 1), secret.text + " ")
    return "".join(parts)


@dataclass(frozen=True, slots=True)
class Corpus:
    secrets: list[Case]
    lookalikes: list[Case]


def build_corpus(seed: int = 16, secrets: int = 264, lookalikes: int = 200) -> Corpus:
    """The same corpus for the same arguments."""
    rng = random.Random(seed)
    return Corpus(secret_cases(rng, secrets), lookalike_cases(rng, lookalikes))
