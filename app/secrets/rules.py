"""The rules that find credentials: one per way a kind of credential shows up, in priority order.

Three sources, in this order where their matches overlap (the earlier wins): detect-secrets'
plugins' regular expressions and the formats they do not cover that Memoria kept before it had a
maintained catalog (fine-grained GitHub PATs, OpenAI project keys, Anthropic, Voyage, Google,
Hugging Face, npm tokens, whole private key blocks, unquoted AWS secret keys, Memoria's own keys),
with the command, header and format rules of app/secrets/context_rules.py; then the maintained
catalog (app/secrets/catalog.py), the source of every other provider format; then the rules marked
`after_catalog`, which know a credential by a keyword only (URL passwords aside: `password=`,
`the password is …`, `api_key:`, `Bearer …`, `admin / …`), so a format the catalog names keeps its
provider's kind. What a rule matched still has to pass its `accept` (app/secrets/accept.py);
app/secrets/detect.py runs them.
"""

from __future__ import annotations

import re

from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.basic_auth import RESERVED_CHARACTERS, SUB_DELIMITER_CHARACTERS
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.stripe import StripeDetector

from app.secrets.accept import (
    aws_secret,
    bearer,
    jwt,
    mixed_case_token,
    npm_auth_token,
    password,
    secret,
    strong_password,
    token,
    token_in_prose,
    url_password,
)
from app.secrets.context_rules import AFTER_CATALOG, BEFORE_CATALOG
from app.secrets.rule import VALUE, Rule

# Every repetition is bounded: a match, its tail and the checks on its value cost at most a few
# kilobytes of work, however long a run of token characters the text holds.
MAX_TOKEN = 1024
_TOKEN_CHARS = re.compile(rf"[A-Za-z0-9_\-]{{0,{MAX_TOKEN}}}")
_ALNUM = re.compile(rf"[A-Za-z0-9]{{0,{MAX_TOKEN}}}")
_JWT_CHARS = re.compile(r"[A-Za-z0-9_\-.+/=]{0,16384}")
_URL_CHARS = re.escape(RESERVED_CHARACTERS + SUB_DELIMITER_CHARACTERS)
_ASSIGN = (
    r"""["'\]]{0,2}[ \t]*(?:=>|:=|=|:"""
    r"""|[ \t]+(?:(?:is|was)(?:[ \t]+(?:now|still|set[ \t]+to|changed[ \t]+to))?"""
    r"""|(?:set|changed)[ \t]+to):?[ \t]+)"""
    r"""[ \t]*"""
)
_VALUE = (
    r"""(?:"(?P<dq>[^"\s]{1,256})"|'(?P<sq>[^'\s]{1,256})'|`(?P<bq>[^`\s]{1,256})`"""
    r"""|(?P<bare>[^\s"'`]{1,4096}))"""
)
"""A bare value runs up to 4,096 characters: a session token (hundreds of characters) is redacted
whole, never cut where a shorter bound stopped."""
_PASSPHRASE_VALUE = r"""(?:"(?P<dq>[^"\n]{1,256})"|'(?P<sq>[^'\n]{1,256})'|(?P<bare>[^\s"'`]{1,256}))"""  # noqa: S105
"""A quoted password may hold spaces (`passphrase: "correct horse battery staple"`)."""
_PASSWORD_WORDS = r"(?:pass(?:word|wd|phrase)?|pwd|(?<![A-Za-z0-9])pw)"  # noqa: S105 - keywords, not a password
_KEY_QUALIFIERS = (
    "api",
    "access",
    "secret",
    "private",
    "signing",
    "encryption",
    "master",
    "license",
    "app",
    "account",
    "storage",
    "admin",
    "auth",
    "client",
    "server",
    "service",
    "deploy",
)
_SECRET_WORDS = (
    r"(?:secret|token|credentials?|apikey|(?:"
    + "|".join(f"(?<={re.escape(word + sep)})" for word in _KEY_QUALIFIERS for sep in ("", "_", "-", " "))
    + r")key)"
)
"""Anchored at the keyword itself: `api_key` is found at its `key`, preceded by `api_`."""
_QUALIFIER = (
    r"(?:[ \t]+(?:for|of|on|in|to)(?:[ \t]+[\w.\-/]{1,40}){1,4}?(?=[ \t]+(?:is|was|set|changed)[ \t]|:))?"
)
"""`password for the staging db is …`, `key for the uploader: …`: a few words between the keyword and
the `is` or colon."""


_JWT = re.compile(r"eyJ[A-Za-z0-9_\-]{1,4096}={0,2}\.[A-Za-z0-9_\-]{1,16384}={0,2}\.?")
"""detect-secrets' JWT pattern (`eyJ…+\\.…+`) with bounded parts; its validity check decides."""


def _ds(plugin: type, index: int = 0) -> re.Pattern[str]:
    """One of a detect-secrets plugin's patterns (its `denylist`)."""
    pattern: re.Pattern[str] = list(plugin.denylist)[index]  # type: ignore[attr-defined]
    return pattern


RULES: tuple[Rule, ...] = (
    # First wins where matches overlap: whole blocks and specific formats before keyword rules.
    Rule(
        "private-key",
        re.compile(
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
            r"(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)"
        ),
        ("private key",),
    ),
    Rule("jwt", _JWT, ("eyj",), jwt, tail=_JWT_CHARS, word_start=True, anchored=True),
    Rule(
        "slack-webhook",
        _ds(SlackDetector, 1),
        ("https://hooks.slack.com",),
        tail=_TOKEN_CHARS,
        anchored=True,
    ),
    Rule(
        "slack-token", _ds(SlackDetector, 0), ("xox",), token, tail=_TOKEN_CHARS, bounded=True, anchored=True
    ),
    Rule(
        "slack-token",
        re.compile(r"(?:xox[a-z]|xapp)-[0-9A-Za-z\-]{10,1024}"),
        ("xox", "xapp-"),
        token,
        tail=_TOKEN_CHARS,
        bounded=True,
        anchored=True,
    ),
    Rule(
        "github-token",
        _ds(GitHubTokenDetector),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        token,
        tail=_TOKEN_CHARS,
        bounded=True,
        anchored=True,
    ),
    Rule(
        "github-token",
        re.compile(r"github_pat_[A-Za-z0-9_]{40,1024}"),
        ("github_pat_",),
        token,
        tail=_TOKEN_CHARS,
        bounded=True,
    ),
    *(
        Rule(
            "gitlab-token",
            pattern,
            (
                "glpat-",
                "gldt-",
                "glft-",
                "glsoat-",
                "glrt-",
                "gr1348941",
                "glcbt-",
                "glimt-",
                "glptt-",
                "glagent-",
                "gloas-",
            ),
            token,
            tail=_TOKEN_CHARS,
            bounded=True,
        )
        for pattern in GitLabTokenDetector.denylist
    ),
    Rule("anthropic-key", re.compile(r"sk-ant-[A-Za-z0-9_\-]{20,1024}"), ("sk-ant-",), token, bounded=True),
    Rule("openai-key", _ds(OpenAIDetector), ("t3blbkfj",), token, tail=_TOKEN_CHARS, bounded=True),
    Rule(
        "openai-key",
        re.compile(r"(?<![A-Za-z0-9_\-])sk-(?!ant-)(?:[a-z]{2,10}-)?[A-Za-z0-9_\-]{20,1024}"),
        ("sk-",),
        mixed_case_token,
        bounded=True,
        anchored=True,
    ),
    Rule("stripe-key", _ds(StripeDetector), ("k_live_",), token, tail=_ALNUM, bounded=True),
    Rule(
        "stripe-key",
        re.compile(r"(?:(?:sk|rk)_test_|whsec_)[0-9A-Za-z]{24,1024}"),
        ("k_test_", "whsec_"),
        token,
        bounded=True,
    ),
    Rule(
        "aws-access-key",
        _ds(AWSKeyDetector, 0),
        ("akia", "asia", "abia", "acca", "a3t"),
        token,
        bounded=True,
        anchored=True,
    ),
    Rule(
        "aws-secret-key",
        re.compile(
            r"aws[\w.\- ]{0,30}?key[\w\-]{0,12}" + _QUALIFIER + _ASSIGN + r"""["']?"""
            r"(?P<key>(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
            re.IGNORECASE,
        ),
        ("aws",),
        aws_secret,
        group="key",
        anchored=True,
    ),
    Rule("aws-secret-key", _ds(AWSKeyDetector, 1), ("aws",), aws_secret, group=1, anchored=True),
    Rule("google-api-key", re.compile(r"AIza[0-9A-Za-z_\-]{35}"), ("aiza",), token, bounded=True),
    Rule(
        "npm-token",
        re.compile(r"npm_[A-Za-z0-9]{36}"),
        ("npm_",),
        token,
        tail=_ALNUM,
        bounded=True,
    ),
    Rule(
        "npm-token",
        re.compile(r"_authToken[ \t]*=[ \t]*[\"']?(?P<value>[^\s\"']{16,1024})", re.IGNORECASE),
        ("_authtoken",),
        npm_auth_token,
        group="value",
        anchored=True,
    ),
    Rule(
        "huggingface-token",
        re.compile(r"hf_[A-Za-z0-9]{30,1024}"),
        ("hf_",),
        mixed_case_token,
        tail=_ALNUM,
        bounded=True,
    ),
    Rule("sendgrid-key", _ds(SendGridDetector), ("sg.",), token, tail=_TOKEN_CHARS, bounded=True),
    Rule("pypi-token", _ds(PypiTokenDetector), ("pypi-ageichlwas5vcmc",), token, tail=_TOKEN_CHARS),
    Rule(
        "voyage-key",
        re.compile(r"(?<![A-Za-z0-9_\-])pa-[A-Za-z0-9_\-]{30,1024}"),
        ("pa-",),
        mixed_case_token,
        bounded=True,
        anchored=True,
    ),
    # Memoria's own API keys (app/auth/keys.py: "mem_" + 43 url-safe base64 characters).
    Rule("memoria-key", re.compile(r"mem_[A-Za-z0-9_\-]{43}"), ("mem_",), token, bounded=True),
    *BEFORE_CATALOG,
    Rule(
        "url-password",
        re.compile(rf"://[^{_URL_CHARS}\s]*:(?P<password>[^/?\[\]\s]{{1,256}})@"),
        ("://",),
        url_password,
        group="password",
        anchored=True,
    ),
    Rule(
        "bearer-token",
        re.compile(r"\bbearer[ \t]+(?P<token>[A-Za-z0-9\-._~+/]{16,1024}={0,2})", re.IGNORECASE),
        ("bearer",),
        bearer,
        group="token",
        anchored=True,
        after_catalog=True,
    ),
    Rule(
        "password",
        re.compile(_PASSWORD_WORDS + r"(?![A-Za-z0-9_\-])" + _QUALIFIER + _ASSIGN + _VALUE, re.IGNORECASE),
        ("pass", "pwd", "pw"),
        password,
        group=VALUE,
        anchored=True,
        after_catalog=True,
    ),
    Rule(
        "password",
        re.compile(
            r"(?:pass(?:word|phrase)|passwd|(?<![A-Za-z0-9])pw)(?![A-Za-z0-9_\-])"
            + _QUALIFIER
            + r"(?:"
            + _ASSIGN
            + r"|[ \t]+)"
            + _PASSPHRASE_VALUE,
            re.IGNORECASE,
        ),
        ("pass", "pw"),
        strong_password,
        group=VALUE,
        anchored=True,
        after_catalog=True,
    ),
    Rule(
        "secret",
        re.compile(_SECRET_WORDS + r"(?![A-Za-z0-9_\-])" + _QUALIFIER + _ASSIGN + _VALUE, re.IGNORECASE),
        ("secret", "token", "credential", "apikey", "key"),
        secret,
        group=VALUE,
        anchored=True,
        after_catalog=True,
    ),
    Rule(
        "secret",
        re.compile(_SECRET_WORDS + r"(?![A-Za-z0-9_\-])[ \t]+(?P<bare>[^\s\"'`]{20,1024})", re.IGNORECASE),
        ("secret", "token", "credential", "apikey", "key"),
        token_in_prose,
        group=VALUE,
        anchored=True,
        after_catalog=True,
    ),
    *AFTER_CATALOG,
)
"""The rules in priority order; every placeholder kind is one of their `kind`s."""

KINDS: tuple[str, ...] = tuple(dict.fromkeys(rule.kind for rule in RULES))
