"""Credential detection and redaction: every kind found whole, look-alikes left alone, placeholders
numbered per memory.

The credentials are generated from a seeded RNG in the providers' formats (`memoria_bench.secrets.corpus`),
so no literal secret sits in this file.
"""

from __future__ import annotations

import random

import pytest

from app.auth.keys import generate_key
from app.secrets import KINDS, Detector, placeholders_in, redact, redact_all, secrets_of
from memoria_bench.secrets.alphabet import ALNUM
from memoria_bench.secrets.corpus import GENERATORS, TEMPLATES, build_corpus
from memoria_bench.secrets.dev_corpus import POSITIVES as DEV_POSITIVES

KINDS_GENERATED = sorted(GENERATORS)


def _fake(kind: str, seed: int = 0) -> str:
    return GENERATORS[kind](random.Random(f"{kind}-{seed}"))


def test_the_corpora_cover_every_kind_the_rules_label_but_pypi() -> None:
    assert set(KINDS) - set(GENERATORS) - set(DEV_POSITIVES) == {"pypi-token"}
    assert len(GENERATORS) >= 15


@pytest.mark.parametrize("kind", KINDS_GENERATED)
@pytest.mark.parametrize("seed", range(3))
def test_each_kind_is_found_whole_and_labelled_in_every_sentence_it_appears_in(kind: str, seed: int) -> None:
    value = _fake(kind, seed)
    for template in TEMPLATES[kind]:
        head, _, tail = template.partition("{s}")
        text = head.format(user="app", host="db.internal", svc="billing") + value
        text += tail.format(user="app", host="db.internal", svc="billing")
        findings = redact(text).findings
        assert [f.original for f in findings] == [value], text
        # a value a keyword names may be labelled with its provider by the catalog (`datadog api key:`)
        assert findings[0].kind == kind or (kind == "secret" and findings[0].kind not in KINDS), text


@pytest.mark.parametrize("kind", KINDS_GENERATED)
def test_redaction_leaves_no_fragment_of_the_secret(kind: str) -> None:
    value = _fake(kind, 7)
    head, _, tail = TEMPLATES[kind][0].partition("{s}")
    fields = {"user": "app", "host": "db.internal", "svc": "billing"}
    text = f"{head.format(**fields)}{value}{tail.format(**fields)} and nothing else"
    redacted = redact(text).text
    windows = {value[i : i + 8] for i in range(len(value) - 7)}
    assert not [w for w in windows if w in redacted], redacted
    assert f"[secret:{kind}#1]" in redacted


def test_a_token_longer_than_the_library_pattern_is_redacted_to_its_end() -> None:
    # detect-secrets matches sk_live_ + 24 characters; Stripe issues longer keys
    rng = random.Random(1)
    key = "sk_live_" + "".join(rng.choice(ALNUM) for _ in range(99))
    assert redact(f"charge with {key} today").text == "charge with [secret:stripe-key#1] today"


def test_a_private_key_block_goes_from_begin_to_end_marker() -> None:
    block = _fake("private-key")
    redacted = redact(f"the key:\n{block}\nkeep it safe").text
    assert redacted == "the key:\n[secret:private-key#1]\nkeep it safe"


def test_a_truncated_private_key_block_is_redacted_to_the_end_of_the_text() -> None:
    block = _fake("private-key")
    cut = block[: len(block) // 2]
    assert redact(f"pasted: {cut}").text == "pasted: [secret:private-key#1]"


@pytest.mark.parametrize(
    "text",
    [
        "Fixed in commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39, see the PR.",
        "request id 550e8400-e29b-41d4-a716-446655440000 failed with 502",
        "image digest sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "Fixture payload (base64): "
        "SGVsbG8sIFdvcmxkIQ0KVGhpcyBpcyBhIGJhc2U2NCBibG9iIG9mIGRhdGEgYW5kIG5vdCBhIGtleS4=",
        "Bumped pydantic to 2.14.3 and node to v20.11.1-rc.1+build.7",
        "AbstractSingletonProxyFactoryBeanConfigurationManager handles the retries",
        "test_store_rejects_content_over_the_limit_with_422 is flaky",
        "set OPENAI_API_KEY=YOUR_API_KEY in .env.example",
        "password: <your-password>",
        "token=${GITHUB_TOKEN} is injected by the workflow",
        "The README shows ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx as the token format",
        "The AWS docs use AKIAIOSFODNN7EXAMPLE as the access key id",
        "postgres://user:password@localhost:5432/app is the local default",
        "api_key = os.environ['VOYAGE_API_KEY']",
        "password = var.db_password in the terraform module",
        "the token budget is 4096 per request",
        "The password is stored in 1Password under 'billing staging'",
        "pod pa-payments-reconciler-7f9c8d6b5d-x2x9k was OOM-killed",
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
        "ci's public key: "
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ci@acme",
        "postgres://app@db.internal:5432/app has no password",
        "Authorization: Bearer $MEMORIA_KEY",
    ],
)
def test_lookalikes_of_credentials_are_left_alone(text: str) -> None:
    assert redact(text).findings == ()


def test_keyword_assignments_need_a_random_value_not_a_word_or_a_reference() -> None:
    rng = random.Random(3)
    value = "".join(rng.choice(ALNUM) for _ in range(32))
    assert redact(f"api_key: {value}").text == "api_key: [secret:secret#1]"
    assert redact("api_key: required").findings == ()
    assert redact("api_key: settings.vendor_api_key").findings == ()


def test_a_quoted_value_is_redacted_without_its_quotes_and_a_bare_one_without_the_full_stop() -> None:
    rng = random.Random(4)
    value = "".join(rng.choice(ALNUM) for _ in range(16))
    assert redact(f'password: "{value}"').text == 'password: "[secret:password#1]"'
    assert redact(f"DB_PASSWORD={value}.").text == "DB_PASSWORD=[secret:password#1]."


def test_a_url_keeps_its_user_and_host_and_loses_only_the_password() -> None:
    password = _fake("url-password")
    redacted = redact(f"the staging DB is postgres://app:{password}@db.internal:5432/app").text
    assert redacted == "the staging DB is postgres://app:[secret:url-password#1]@db.internal:5432/app"


def test_memoria_keys_are_found() -> None:
    assert [f.kind for f in redact(f"the hook uses {generate_key()}").findings] == ["memoria-key"]


def test_a_jwt_must_decode_to_json() -> None:
    assert redact("eyJub3QganNvbg.eyJub3QganNvbg.c2lnbmF0dXJl").findings == ()
    token = _fake("jwt")
    assert [f.kind for f in redact(f"token {token}.").findings] == ["jwt"]


def test_placeholders_are_typed_and_numbered_in_order_of_first_appearance() -> None:
    github, aws = _fake("github-token"), _fake("aws-access-key")
    redacted = redact(f"push with {github}, deploy with {aws}")
    assert redacted.text == "push with [secret:github-token#1], deploy with [secret:aws-access-key#2]"
    assert [(f.number, f.kind) for f in redacted.findings] == [(1, "github-token"), (2, "aws-access-key")]


def test_the_same_secret_twice_gets_the_same_number_and_is_one_secret() -> None:
    github, aws = _fake("github-token"), _fake("aws-access-key")
    redacted = redact(f"{github} then {aws} then {github} again")
    assert redacted.text == (
        "[secret:github-token#1] then [secret:aws-access-key#2] then [secret:github-token#1] again"
    )
    assert [(s.number, s.original) for s in redacted.secrets] == [(1, github), (2, aws)]


def test_findings_locate_each_original_in_the_text() -> None:
    text = f"a {_fake('github-token')} b {_fake('npm-token')} c"
    for finding in redact(text).findings:
        assert text[finding.start : finding.end] == finding.original


def test_redacting_the_same_text_twice_gives_the_same_result() -> None:
    text = f"use {_fake('slack-token')} and {_fake('stripe-key')}"
    assert redact(text) == redact(text)


def test_redacting_redacted_text_changes_nothing() -> None:
    once = redact(f"use {_fake('openai-key')} and DB_PASSWORD={_fake('password')}").text
    assert redact(once).text == once


def test_new_numbers_follow_the_placeholders_already_in_the_text() -> None:
    text = f"old [secret:github-token#3] and new {_fake('gitlab-token')}"
    assert redact(text).text == "old [secret:github-token#3] and new [secret:gitlab-token#4]"
    assert placeholders_in(redact(text).text) == {3, 4}


def test_the_fields_of_one_memory_share_one_numbering() -> None:
    github, voyage = _fake("github-token"), _fake("voyage-key")
    content, keywords = redact_all([f"{github} and {voyage}", f"keywords {voyage}"])
    assert content.text == "[secret:github-token#1] and [secret:voyage-key#2]"
    assert keywords.text == "keywords [secret:voyage-key#2]"
    assert [s.number for s in secrets_of([content, keywords])] == [1, 2]


def test_non_ascii_text_keeps_the_offsets_of_its_findings() -> None:
    # "İ" lowers to two characters; the offsets into the original must still hold
    token = _fake("github-token")
    text = f"İİİ token {token} İ"
    finding = redact(text).findings[0]
    assert text[finding.start : finding.end] == token


def test_a_detector_with_fewer_rules_finds_only_their_kinds() -> None:
    from app.secrets.detect import RULES

    only_github = Detector([rule for rule in RULES if rule.kind == "github-token"])
    text = f"{_fake('github-token')} {_fake('aws-access-key')}"
    assert [f.kind for f in redact(text, only_github).findings] == ["github-token"]


def test_the_bench_corpus_is_the_same_for_the_same_seed_and_all_of_it_is_detected() -> None:
    first, again = build_corpus(5, 300, 200), build_corpus(5, 300, 200)
    assert first == again
    assert len({case.kind for case in first.secrets}) >= 15
    found = sum(
        any(f.start <= case.start and f.end >= case.end for f in redact(case.text).findings)
        for case in first.secrets
    )
    flagged = sum(bool(redact(case.text).findings) for case in first.lookalikes)
    assert found / len(first.secrets) >= 0.98
    assert flagged / len(first.lookalikes) <= 0.02


@pytest.mark.parametrize("decoy", ["ghp_", "eyJ", "xoxb-1-", "api_key=", "aws_key=", "sk-", "://a:b"])
def test_a_long_run_of_repeated_prefixes_does_not_hide_a_real_credential_after_it(decoy: str) -> None:
    # each decoy occurrence is not tried again inside the previous attempt's match; the real one is
    github = _fake("github-token")
    text = decoy * 2000 + f" then {github} and DB_PASSWORD={_fake('password')}"
    kinds = [finding.kind for finding in redact(text).findings if finding.start > len(decoy) * 2000]
    assert kinds == ["github-token", "password"]
