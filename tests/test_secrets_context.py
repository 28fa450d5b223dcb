"""Credentials an outside held-out set found missed: each is now redacted whole, and the look-alikes
of the same shapes stay text.

Known by their context (an `Authorization: Basic` header, `curl -u`, `mysql -p`, `admin / …` and
`the password is …` in prose), by a provider format the maintained catalog knows (Azure storage,
Docker Hub, DigitalOcean, `age`, Linear) or that Memoria's own rules add (Twilio, Mailgun, Telegram,
FCM, a service account's `private_key_id`), and an AWS session token longer than a value used to be
allowed to run. Values come from the dev corpus' generators (`memoria_bench.secrets.dev_corpus`),
seeded, so no literal credential sits in this file.
"""

from __future__ import annotations

import base64
import random
from collections.abc import Callable

import pytest

from app.secrets import placeholder, redact
from app.secrets.catalog import kind_of, scanner
from app.secrets.detect import PLACEHOLDER
from memoria_bench.secrets.dev_corpus import LOOKALIKES, POSITIVES


def value_of(kind: str, seed: int = 0) -> str:
    generate, _ = POSITIVES[kind]
    return generate(random.Random(f"{kind}-{seed}"))


def assert_redacted_whole(text: str, secret: str) -> str:
    """`secret` is gone from the redacted `text`, no fragment of it left; the redacted text."""
    redacted = redact(text)
    assert [finding.original for finding in redacted.findings] == [secret], redacted.text
    windows = {secret[i : i + 6] for i in range(len(secret) - 5)}
    assert not [window for window in windows if window in redacted.text], redacted.text
    return redacted.text


def test_an_http_basic_authorization_header_is_redacted_outside_a_curl_command() -> None:
    token = base64.b64encode(b"ops:Wq7!zK2mPx").decode()
    text = assert_redacted_whole(f"the proxy logged Authorization: Basic {token} on the 401", token)
    assert "[secret:basic-auth#1]" in text


def test_a_curl_user_password_with_punctuation_is_redacted() -> None:
    password = value_of("curl-user")
    text = assert_redacted_whole(f"curl -u deploy:{password} https://ci.internal/job/x", password)
    assert text.startswith("curl -u deploy:[secret:")


@pytest.mark.parametrize("command", ["mysql -h db -u root -p{s} shop", "mysqldump -u app -p'{s}' shop"])
def test_a_mysql_password_glued_to_its_flag_is_redacted(command: str) -> None:
    password = value_of("mysql-password")
    assert_redacted_whole(command.format(s=password), password)


def test_a_mysql_p_that_prompts_for_the_password_is_left_alone() -> None:
    text = "mysql -h db -u root -p shop (it prompts)"
    assert redact(text).findings == ()


def test_a_database_url_password_holding_an_exclamation_mark_is_redacted_whole() -> None:
    password = value_of("url-password")
    assert "!" in password
    text = assert_redacted_whole(f"DATABASE_URL=postgres://app:{password}@db.internal:5432/shop", password)
    assert "[secret:url-password#1]@db.internal" in text


def test_a_database_url_password_holding_an_at_sign_is_redacted_whole() -> None:
    password = value_of("url-password") + "@x"
    text = assert_redacted_whole(
        f"psql postgresql://app:{password}@db.internal/shop?mail=ops@acme.io", password
    )
    assert text == "psql postgresql://app:[secret:url-password#1]@db.internal/shop?mail=ops@acme.io"


@pytest.mark.parametrize(
    "sentence",
    [
        "router login: admin / {s}",
        "the password is {s} for the shared account",
        "the wifi password is now {s}",
        "unlock it with the passphrase {s}",
        "Passphrase: {s}",
    ],
)
def test_a_password_named_in_prose_is_redacted(sentence: str) -> None:
    password = value_of("prose-password", 3)
    assert_redacted_whole(sentence.format(s=password), password)


def test_a_quoted_passphrase_of_words_is_redacted() -> None:
    phrase = value_of("passphrase")
    assert_redacted_whole(f'the backup passphrase is "{phrase}"', phrase)


@pytest.mark.parametrize(
    ("kind", "sentence"),
    [
        (
            "azure-storage-key",
            "DefaultEndpointsProtocol=https;AccountName=logs;AccountKey={s};EndpointSuffix=x",
        ),
        ("twilio-auth-token", "twilio creds: sid AC0f1e2d3c4b5a69788796a5b4c3d2e1f0, auth token {s}"),
        ("dockerhub-pat", "docker login -u acme -p {s}"),
        ("mailgun-key", "the newsletter job sends with {s} (EU region)"),
        ("digitalocean-token", "doctl auth init --access-token {s}"),
        ("telegram-bot-token", "alerts go through the bot {s}"),
        ("age-secret-key", "# public key: age1qyz\n{s}"),
        ("fcm-server-key", "FCM server key: {s}"),
        ("linear-api-key", "the triage script uses {s}"),
    ],
)
def test_a_provider_credential_is_redacted_whole(kind: str, sentence: str) -> None:
    value = value_of(kind)
    assert_redacted_whole(sentence.format(s=value), value)


def test_a_service_accounts_private_key_id_is_redacted() -> None:
    key_id = value_of("gcp-private-key-id")
    text = f'{{"type": "service_account", "project_id": "acme", "private_key_id": "{key_id}"}}'
    assert '"private_key_id": "[secret:gcp-private-key-id#1]"' in assert_redacted_whole(text, key_id)


def test_an_aws_session_token_is_redacted_to_its_last_character() -> None:
    token = "IQoJb3JpZ2luX2Vj" + value_of("aws-session-token")[16:317]
    assert len(token) == 317
    assert assert_redacted_whole(f"export AWS_SESSION_TOKEN={token}", token).endswith("]")


def test_a_credential_after_non_ascii_text_is_redacted_at_its_own_place() -> None:
    value = value_of("linear-api-key")
    text = assert_redacted_whole(f"Überprüft — café ✓: {value} (rotiert)", value)
    assert text == "Überprüft — café ✓: [secret:linear-api-key#1] (rotiert)"


@pytest.mark.parametrize(("family", "generate"), LOOKALIKES, ids=[family for family, _ in LOOKALIKES])
def test_a_look_alike_stays_untouched(family: str, generate: Callable[[random.Random], str]) -> None:
    rng = random.Random(family)
    for _ in range(3):
        text = generate(rng)
        assert redact(text).text == text


def test_curl_user_redacts_the_password_and_keeps_the_user_name() -> None:
    password = value_of("mysql-password", 5)
    assert (
        redact(f"curl --user admin:{password} https://x").text
        == "curl --user admin:[secret:password#1] https://x"
    )


def test_every_catalog_rule_names_a_kind_a_placeholder_can_carry() -> None:
    kinds = {kind_of(rule["id"]) for rule in scanner().rules.metadata()}
    assert len(kinds) > 100
    assert [kind for kind in kinds if not PLACEHOLDER.fullmatch(placeholder(kind, 1))] == []


def test_a_session_cookie_in_a_cookie_header_is_redacted_and_preferences_are_not() -> None:
    session = value_of("session-cookie")
    text = assert_redacted_whole(f"Cookie: theme=dark; sessionid={session}; lang=en", session)
    assert text == "Cookie: theme=dark; sessionid=[secret:session-cookie#1]; lang=en"
