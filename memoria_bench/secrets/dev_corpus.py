"""The dev corpus: credentials the way an outside test writes them, and the look-alikes around them.

Kept apart from `corpus.py` (the corpus the first rules were written against): other providers,
other sentences (shell history, config files, chat-style notes, runbooks), credentials known only by
their context (a `curl -u`, a `mysql -p`, an `Authorization: Basic` header, `admin / …` in prose),
and look-alikes of the same shapes (a `curl -u $USER:$TOKEN`, a `mysql -p` that prompts, a docs
`key-xxxx…`). Rules are tuned against this corpus; the first corpus then says whether a change
still holds on text it was not tuned on, and an outside held-out set says the rest.

Values are generated from a seeded `random.Random` in each provider's published format (prefix,
alphabet, length), so no one's credential is in this file.
"""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Callable

from memoria_bench.secrets.alphabet import ALNUM, B64, B64URL, HEX, Case, pick
from memoria_bench.secrets.corpus import Corpus

_BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
_LOWER_ALNUM = string.ascii_lowercase + string.digits
_PW = ALNUM + "!#%&*@^-_+=?$"
_NAMES = ("ops", "ana", "deploy", "ci-bot", "jenkins", "svc-etl", "root", "admin")
_WORDS = ("correct", "horse", "battery", "staple", "orbit", "maple", "tundra", "violet", "copper", "lantern")


def _password(rng: random.Random) -> str:
    while True:
        value = pick(rng, _PW, rng.randrange(9, 17))
        if (
            sum(
                (
                    any(c.islower() for c in value),
                    any(c.isupper() for c in value),
                    any(c.isdigit() for c in value),
                )
            )
            >= 2
        ):
            return value


def _basic(rng: random.Random) -> str:
    return base64.b64encode(f"{rng.choice(_NAMES)}:{_password(rng)}".encode()).decode()


# kind -> (value generator, sentences with {s} where the value goes)
POSITIVES: dict[str, tuple[Callable[[random.Random], str], tuple[str, ...]]] = {
    "basic-auth": (
        _basic,
        (
            "curl -sS -H 'Authorization: Basic {s}' https://registry.internal/v2/_catalog",
            "nginx logged the header Authorization: Basic {s} on the failing request",
            'requests.get(url, headers={{"Authorization": "Basic {s}"}})',
        ),
    ),
    "curl-user": (
        lambda r: f"{_password(r)}!",
        (
            "curl -u {u}:{s} https://jenkins.internal/job/nightly/build",
            "reproduce with: curl --user {u}:{s} -X POST https://api.internal/v1/reindex",
            "curl -fsS -u '{u}:{s}' https://nexus.internal/service/rest/v1/status",
        ),
    ),
    "mysql-password": (
        _password,
        (
            "mysql -h db-replica -u {u} -p{s} analytics",
            "mysqldump -u {u} -p{s} --single-transaction shop > shop.sql",
            "ran `mysql --host=10.1.2.3 -u {u} -p{s}` from the bastion",
            "mysql -u{u} -p{s} -e 'show processlist'",
        ),
    ),
    "url-password": (
        lambda r: pick(r, ALNUM, 6) + "!" + pick(r, ALNUM, 5),
        (
            "SQLALCHEMY_URL=postgresql+psycopg://{u}:{s}@pg.internal:5432/orders",
            "the broker is amqp://{u}:{s}@mq.internal:5672/ (vhost /)",
            "mongodb://{u}:{s}@mongo-0.mongo:27017/?authSource=admin",
            "mysql://{u}:{s}#1@localhost:3306/shop",
            "psql postgresql://{u}:{s}@x@pg.internal/app",
            "https://{u}:{s}@git.internal/acme/app.git?notify=ops@acme.io",
        ),
    ),
    "prose-password": (
        _password,
        (
            "router admin page: admin / {s}",
            "login for the grafana box is admin / {s} until SSO lands",
            "the password is {s} for the shared test account",
            "wifi in the office: the password is now {s}",
            "the GPG passphrase {s} unlocks the release key",
            "Passphrase: {s} (ask before using it)",
            "creds are admin/{s} for now",
            "the password to the vault is {s}",
        ),
    ),
    "passphrase": (
        lambda r: " ".join(r.sample(_WORDS, 4)),
        ('the backup passphrase is "{s}"', "vault unseal passphrase: '{s}'"),
    ),
    "azure-storage-key": (
        lambda r: base64.b64encode(r.randbytes(64)).decode(),
        (
            "DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey={s};EndpointSuffix=core.windows.net",
            "AZURE_STORAGE_CONNECTION_STRING='DefaultEndpointsProtocol=https;AccountName=stg01;AccountKey={s}'",
            "azure storage account key: {s}",
        ),
    ),
    "twilio-auth-token": (
        lambda r: pick(r, HEX, 32),
        ("TWILIO_AUTH_TOKEN={s}", "twilio creds: sid ACa1b2c3d4e5f60718293a4b5c6d7e8f90 auth token {s}"),
    ),
    "dockerhub-pat": (
        lambda r: "dckr_pat_" + pick(r, B64URL, 27),
        ("echo {s} | docker login -u acmebot --password-stdin", "DOCKERHUB_TOKEN={s} in the release job"),
    ),
    "mailgun-key": (
        lambda r: "key-" + pick(r, HEX, 32),
        ("MAILGUN_API_KEY={s}", "curl -s --user 'api:{s}' https://api.mailgun.net/v3/mg.acme.io/messages"),
    ),
    "digitalocean-token": (
        lambda r: "dop_v1_" + pick(r, HEX, 64),
        ("doctl auth init --access-token {s}", "DIGITALOCEAN_TOKEN={s} for the droplet cleanup cron"),
    ),
    "telegram-bot-token": (
        lambda r: f"{r.randrange(10**9, 8 * 10**9)}:AA{pick(r, B64URL, 33)}",
        ("alerts go through the bot {s}", "TELEGRAM_BOT_TOKEN={s}"),
    ),
    "age-secret-key": (
        lambda r: "AGE-SECRET-KEY-1" + pick(r, _BECH32, 58),
        ("# created: 2026-03-01\n# public key: age1qyz...\n{s}", "sops age key in CI: {s}"),
    ),
    "fcm-server-key": (
        lambda r: "AAAA" + pick(r, B64URL, 7) + ":APA91b" + pick(r, B64URL, 134),
        ("FCM legacy server key: {s}", "push notifications: key={s}"),
    ),
    "linear-api-key": (
        lambda r: "lin_api_" + pick(r, ALNUM, 40),
        ("LINEAR_API_KEY={s}", "the triage script talks to Linear with {s}"),
    ),
    "gcp-private-key-id": (
        lambda r: pick(r, HEX, 40),
        (
            '{{"type": "service_account", "project_id": "acme-prod",'
            ' "private_key_id": "{s}", "client_id": "1"}}',
        ),
    ),
    "aws-session-token": (
        lambda r: "IQoJb3JpZ2luX2Vj" + pick(r, B64, 300) + "==",
        ("export AWS_SESSION_TOKEN={s}", "aws_session_token = {s}"),
    ),
    "shopify-token": (
        lambda r: "shpat_" + pick(r, HEX, 32),
        ("SHOPIFY_ACCESS_TOKEN={s}", "the storefront app uses {s}"),
    ),
    "postman-key": (
        lambda r: f"PMAK-{pick(r, HEX, 24)}-{pick(r, HEX, 34)}",
        ("postman api key {s} for the collection sync",),
    ),
    "vault-token": (lambda r: "hvs." + pick(r, B64URL, 24), ("VAULT_TOKEN={s} vault kv get secret/ci",)),
    "grafana-token": (
        lambda r: "glsa_" + pick(r, ALNUM, 32) + "_" + pick(r, HEX, 8),
        ("grafana service account token: {s}",),
    ),
    "planetscale-password": (lambda r: "pscale_pw_" + pick(r, B64URL, 43), ("PLANETSCALE_PASSWORD={s}",)),
    "supabase-token": (lambda r: "sbp_" + pick(r, HEX, 40), ("supabase login --token {s}",)),
    "github-token": (lambda r: "ghp_" + pick(r, ALNUM, 36), ("git clone https://{s}@github.com/acme/infra",)),
    "doppler-token": (lambda r: "dp.pt." + pick(r, ALNUM, 43), ("DOPPLER_TOKEN={s} doppler run -- make",)),
    "pulumi-token": (lambda r: "pul-" + pick(r, HEX, 40), ("PULUMI_ACCESS_TOKEN={s}",)),
    "google-oauth-token": (
        lambda r: "ya29." + pick(r, B64URL, 150),
        ("ya29 token from gcloud: {s}", "{s} is the oauth access token the script used"),
    ),
    "notion-token": (
        lambda r: "secret_" + pick(r, ALNUM, 43),
        ("notion integration {s}", "NOTION_TOKEN={s}"),
    ),
    "alibaba-access-key": (
        lambda r: "LTAI" + pick(r, ALNUM, r.choice([12, 16, 20])),
        ("aliyun access key id {s}", "ALIBABA_CLOUD_ACCESS_KEY_ID={s}"),
    ),
    "prose-token": (
        lambda r: pick(r, ALNUM, r.choice([24, 32, 40])),
        (
            "the vercel token {s} expires monthly",
            "okta api token 00{s} for the scim sync",
            "algolia admin key {s}",
        ),
    ),
    "session-cookie": (
        lambda r: pick(r, ALNUM, r.choice([24, 32, 48])),
        ("Cookie: theme=dark; sessionid={s}; lang=en", "Set-Cookie: _shop_session={s}; Path=/; HttpOnly"),
    ),
    "newrelic-key": (
        lambda r: "NRAK-" + pick(r, string.ascii_uppercase + string.digits, 27),
        ("NEW_RELIC_API_KEY={s}",),
    ),
}

LOOKALIKES: tuple[tuple[str, Callable[[random.Random], str]], ...] = (
    (
        "uuid",
        lambda r: (
            f"request id {r.randbytes(4).hex()}-{r.randbytes(2).hex()}-4{r.randbytes(2).hex()[1:]}"
            f"-a{r.randbytes(2).hex()[1:]}-{r.randbytes(6).hex()} failed twice"
        ),
    ),
    ("commit-sha", lambda r: f"fixed in commit {pick(r, HEX, 40)} (see the changelog)"),
    ("image-digest", lambda r: f"image digest sha256:{pick(r, HEX, 64)} is the one in prod"),
    ("md5", lambda r: f"md5 of the dump is {pick(r, HEX, 32)}"),
    (
        "data-uri",
        lambda r: f"the thumbnail is data:image/png;base64,{base64.b64encode(r.randbytes(48)).decode()}",
    ),
    (
        "npm-integrity",
        lambda r: f"integrity sha512-{base64.b64encode(r.randbytes(64)).decode()} in package-lock.json",
    ),
    (
        "placeholder-openai",
        lambda r: "OPENAI_API_KEY=sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx in the README example",
    ),
    (
        "placeholder-mailgun",
        lambda r: "set MAILGUN_API_KEY=key-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx before running the sample",
    ),
    (
        "docs-aws-example",
        lambda r: "the docs use AKIAIOSFODNN7EXAMPLE and wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    (
        "curl-env-vars",
        lambda r: "curl -u $JENKINS_USER:$JENKINS_TOKEN https://jenkins.internal/job/nightly/build",
    ),
    ("mysql-prompt", lambda r: "mysql -h db-replica -u report -p analytics (it prompts for the password)"),
    ("basic-doc", lambda r: "Authorization: Basic <base64 of user:password> is what the proxy expects"),
    ("password-where", lambda r: "the password is stored in 1Password under 'staging db'"),
    ("password-policy", lambda r: "the password is rotated weekly by the vault agent"),
    (
        "slash-words",
        lambda r: "read / write access is granted per namespace; admin / owner roles are separate",
    ),
    ("slash-paths", lambda r: "login / logout buttons moved to the header; see src / components / Nav.tsx"),
    (
        "url-doc-password",
        lambda r: "DATABASE_URL=postgres://user:password@localhost:5432/dev is the local default",
    ),
    ("placeholder-twilio", lambda r: "TWILIO_AUTH_TOKEN=your_auth_token in the quickstart"),
    ("cache-key", lambda r: f"cache key key-{pick(r, HEX, 8)} expired at 12:00"),
    ("pod-name", lambda r: f"pod payments-{pick(r, HEX, 10)}-{pick(r, _LOWER_ALNUM, 5)} restarted after OOM"),
    (
        "version",
        lambda r: f"upgrade to {r.randrange(1, 9)}.{r.randrange(0, 30)}.{r.randrange(0, 10)} fixes the leak",
    ),
    ("trace-ids", lambda r: f"telemetry span {pick(r, HEX, 16)} under trace {pick(r, HEX, 32)}"),
    ("placeholder-docker", lambda r: "DOCKERHUB_TOKEN=dckr_pat_<your token> goes in the repository secrets"),
    (
        "session-token-command",
        lambda r: "export AWS_SESSION_TOKEN=$(aws sts get-session-token --query Credentials.SessionToken)",
    ),
    ("passphrase-prose", lambda r: "the passphrase prompt appears twice when gpg-agent is not running"),
    ("etag", lambda r: f'ETag "{pick(r, HEX, 32)}" did not change after the upload'),
    (
        "private-key-id-prose",
        lambda r: "private_key_id is read from the mounted service account file at start-up",
    ),
    ("sentry-event", lambda r: f"sentry event {pick(r, HEX, 32)} shows the null pointer in the retry loop"),
    (
        "object-key",
        lambda r: f"the object key uploads/{r.randrange(2020, 2027)}/{pick(r, B64URL, 22)}.png is public",
    ),
    (
        "build-checksum",
        lambda r: f"build {pick(r, _LOWER_ALNUM, 12)} passed; artifact checksum {pick(r, HEX, 64)}",
    ),
    (
        "slash-paths-admin",
        lambda r: "see admin/settings/users, then login/logout and the user / group mapping",
    ),
    (
        "identifier-after-keyword",
        lambda r: (
            f"the token {r.choice(['Refresh', 'Access', 'Session'])}TokenHandler{r.randrange(2000, 2030)}Impl"
            " handles expiry; secret SecretManagerClientFactoryV2 loads it"
        ),
    ),
    ("mysql-prompt-redirect", lambda r: f"mysqldump -u root -p --all-databases > all-{r.randrange(100)}.sql"),
    ("basic-template", lambda r: "Authorization: Basic ${CREDS} (CREDS comes from the CI secret store)"),
    ("k8s-secret-name", lambda r: f"kubectl get secret payments-api-secret-{pick(r, HEX, 10)} -o yaml"),
    (
        "cookie-preferences",
        lambda r: f"Cookie: theme=dark; lang=en; tz=Europe/Paris; seen={r.randrange(10**6)}",
    ),
    ("twilio-sid", lambda r: f"twilio account sid AC{pick(r, HEX, 32)} (not a secret)"),
    ("url-query-at", lambda r: f"https://example.com:443?email=ops@acme.io&id={r.randrange(10**6)}"),
)


def dev_corpus(seed: int = 36, per_kind: int = 8, lookalikes: int = 264) -> Corpus:
    """The same dev corpus for the same arguments: `per_kind` credentials of each kind, the
    sentences in turn, and `lookalikes` memories without a credential, the shapes in turn."""
    rng = random.Random(seed)
    secrets: list[Case] = []
    for kind, (generate, templates) in POSITIVES.items():
        for i in range(per_kind):
            head, _, tail = templates[i % len(templates)].partition("{s}")
            user = rng.choice(_NAMES)
            before, after = head.replace("{u}", user), tail.replace("{u}", user)
            before, after = (
                before.replace("{{", "{").replace("}}", "}"),
                after.replace("{{", "{").replace("}}", "}"),
            )
            value = generate(rng)
            secrets.append(Case(before + value + after, kind, len(before), len(before) + len(value), kind))
    negatives = []
    for i in range(lookalikes):
        family, generate_text = LOOKALIKES[i % len(LOOKALIKES)]
        negatives.append(Case(generate_text(rng), family=family))
    return Corpus(secrets, negatives)
