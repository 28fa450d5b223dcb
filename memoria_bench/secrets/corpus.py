"""A seeded corpus of memory-like sentences: credentials of many kinds, and look-alikes that are not.

Every credential is generated here from a seeded `random.Random` at run time: random characters in
the provider's format (prefix, alphabet, length), so it matches what a detector must catch while
being no one's credential (GitHub's checksum suffix, AWS's account encoding, Stripe's and Slack's
server-side records never line up with random characters). Nothing real is, or needs to be, in
this file. Each case records where the credential is in its sentence, so a benchmark can check that
the whole value, not a fragment, was redacted.

The look-alikes, memories without a credential that a careless detector redacts, are
`memoria_bench.secrets.lookalikes`; the alphabets and the `Case` both use, `alphabet`.
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Callable
from dataclasses import dataclass

from memoria_bench.secrets.alphabet import (
    ALNUM,
    B64,
    B64URL,
    BASE32,
    HOSTS,
    PASSWORD_CHARS,
    SERVICES,
    UPPER_ALNUM,
    URL_PASSWORD_CHARS,
    USERS,
    Case,
    pick,
)
from memoria_bench.secrets.lookalikes import lookalike_cases


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
    "aws-access-key": lambda r: r.choice(["AKIA", "ASIA"]) + pick(r, BASE32, 16),
    "aws-secret-key": lambda r: pick(r, B64, 40),
    "github-token": lambda r: (
        r.choice(["ghp_", "gho_", "ghs_", "ghu_"]) + pick(r, ALNUM, 36)
        if r.random() < 0.7
        else "github_pat_" + pick(r, UPPER_ALNUM, 22) + "_" + pick(r, ALNUM, 59)
    ),
    "gitlab-token": lambda r: "glpat-" + pick(r, B64URL, 20),
    "slack-token": lambda r: (
        f"{r.choice(['xoxb', 'xoxp'])}-{r.randrange(10**11, 10**12)}-{r.randrange(10**12, 10**13)}-"
        + pick(r, ALNUM, 24)
    ),
    "slack-webhook": lambda r: (
        "https://hooks.slack.com/services/T"
        + pick(r, UPPER_ALNUM, 8)
        + "/B"
        + pick(r, UPPER_ALNUM, 10)
        + "/"
        + pick(r, ALNUM, 24)
    ),
    "stripe-key": lambda r: (
        r.choice(["sk_live_", "rk_live_", "sk_test_"]) + pick(r, ALNUM, r.choice([24, 99]))
    ),
    "openai-key": lambda r: (
        "sk-proj-" + pick(r, B64URL, r.choice([48, 74, 156]))
        if r.random() < 0.6
        else "sk-" + pick(r, ALNUM, 20) + "T3BlbkFJ" + pick(r, ALNUM, 20)
    ),
    "anthropic-key": lambda r: "sk-ant-api03-" + pick(r, B64URL, 93) + "AA",
    "voyage-key": lambda r: "pa-" + pick(r, B64URL, 43),
    "google-api-key": lambda r: "AIza" + pick(r, B64URL, 35),
    "npm-token": lambda r: "npm_" + pick(r, ALNUM, 36),
    "huggingface-token": lambda r: "hf_" + pick(r, ALNUM, 34),
    "sendgrid-key": lambda r: "SG." + pick(r, B64URL, 22) + "." + pick(r, B64URL, 43),
    "memoria-key": lambda r: "mem_" + pick(r, B64URL, 43),
    "private-key": _private_key,
    "jwt": _jwt,
    "url-password": lambda r: pick(r, URL_PASSWORD_CHARS, r.randrange(10, 25)),
    "bearer-token": lambda r: pick(r, ALNUM + "-._~", r.randrange(32, 65)),
    "password": lambda r: pick(r, PASSWORD_CHARS, r.randrange(10, 21)),
    "secret": lambda r: pick(r, ALNUM, r.randrange(24, 49)),
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
