"""Find credentials in memory text: provider tokens, key blocks, URL passwords, keyword assignments.

Detection is detect-secrets' (its plugins' regular expressions, its JWT validity check, its entropy
and its look-alike heuristics) plus patterns for formats its plugins do not cover (fine-grained
GitHub PATs, OpenAI project keys, Anthropic, Voyage, Google, Hugging Face, npm tokens, whole private
key blocks, unquoted AWS secret keys, bearer tokens, Memoria's own keys). Only detect-secrets' pure
parts are used: its `analyze_line` consults the library's global settings and may try to verify a
token over the network, neither of which belongs in a store path.

Context decides, never shape alone: a 40-character hex string is a commit SHA unless an
`aws…secret…key=` names it, and a random base64 run is data unless a known prefix or a keyword
assignment says otherwise. So there is no context-free "high entropy string" rule; entropy only
tells a real value from a placeholder (`ghp_xxxx…`, `YOUR_API_KEY`, `${TOKEN}`).

Speed: a rule runs only where (or, for a few, only when) one of its trigger substrings occurs, found
with `str.find` on a lowercase copy, so a memory without credentials costs a few dozen substring
searches; every repetition is bounded and an occurrence inside the previous match is not tried
again, so adversarial text (`eyJeyJeyJ…`, `ghp_ghp_…`) stays linear. `memoria bench secrets`
measures the cost per memory.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from detect_secrets.filters.heuristic import is_sequential_string, is_templated_secret
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.basic_auth import RESERVED_CHARACTERS, SUB_DELIMITER_CHARACTERS
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.stripe import StripeDetector

PLACEHOLDER = re.compile(r"\[secret:([a-z0-9-]{1,40})#([1-9][0-9]{0,8})\]")
"""A placeholder as redaction writes it (`[secret:github-token#1]`); group 1 the kind, 2 the number."""


class Span(NamedTuple):
    """One credential in a text: its kind (`github-token`) and where it is (`text[start:end]`)."""

    kind: str
    start: int
    end: int


class _PrintableEntropy(HighEntropyStringsPlugin):
    """detect-secrets' entropy over every visible ASCII character: its base64 alphabet would not count
    the punctuation that makes a password (`%a_@@9z=T=`)."""

    secret_type = "Printable High Entropy String"  # noqa: S105 - a label, not a secret

    def __init__(self) -> None:
        super().__init__(charset=string.ascii_letters + string.digits + string.punctuation, limit=3.0)


class Entropy:
    """Shannon entropy in bits per character, as detect-secrets computes it for its entropy plugins."""

    def __init__(self) -> None:
        self._plugin = _PrintableEntropy()

    def __call__(self, value: str) -> float:
        return float(self._plugin.calculate_shannon_entropy(value))


Accept = Callable[[Entropy, str], bool]
"""Whether a matched value is a real credential rather than a placeholder or an identifier."""


_PLACEHOLDER_WORDS = (
    "your",
    "example",
    "placeholder",
    "changeme",
    "change_me",
    "change-me",
    "redacted",
    "dummy",
    "sample",
    "replace",
    "xxxx",
    "****",
    "....",
    "<",
    ">",
    "todo",
    "insert",
)
_STOPWORDS = frozenset({"none", "null", "nil", "true", "false", "empty", "required", "optional", "unset"})
_ENV_NAME = re.compile(r"^[A-Z]+(?:_[A-Z0-9]+)*$")
_NAME_PART = r"(?:[a-z_$][a-z0-9_$]*|[A-Z_][A-Z0-9_]*|[a-z]+(?:[A-Z][a-z0-9]+)+)"
_DOTTED_NAME = re.compile(rf"^{_NAME_PART}(?:\.{_NAME_PART})+$")
"""`settings.db_password`, `process.env.API_KEY`, `config.clientSecret`: code naming a value."""
_WORDS = re.compile(r"^[a-z]+(?:[-_. ][a-z]+)*$")
_WORD = re.compile(r"^[A-Z]?[a-z]+$")
"""`Welcome`, `required`: a word, not a password (`eeRDoizbbL` is one)."""
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_PRINTF = re.compile(r"^%(?:\(|s$|[A-Za-z_]+%$)")


def _classes(value: str) -> int:
    """How many of lower case, upper case, digits and other characters `value` uses."""
    return (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() for c in value)
    )


def _placeholder_word(value: str) -> bool:
    """`YOUR_API_KEY`, `your-key-here`, `Example`: a placeholder word in one case. Mixed-case matches
    (`tODO` inside `4LYdjMt0sLuKOkk5PfE33YtODObdap…`) are random characters, not words."""
    return any(
        form in value for word in _PLACEHOLDER_WORDS for form in (word, word.upper(), word.capitalize())
    )


def _placeholder(value: str, *, names: bool = True) -> bool:
    """A documentation or template value: `YOUR_API_KEY`, `<token>`, `${DB_PASSWORD}`, `xxxx`, `$TOKEN`;
    with `names`, also what an assignment names instead of a value: `os.environ[...]`,
    `settings.db_password`, an env variable's name, a path, a URL."""
    simple = (
        is_templated_secret(value)
        or value[0] in "${[(<"
        or bool(_PRINTF.match(value))
        or _placeholder_word(value)
        or value.lower() in _STOPWORDS
        or "{{" in value
        or len(set(value)) <= 3
        or is_sequential_string(value)
    )
    return simple or (
        names
        and (
            "(" in value
            or bool(_ENV_NAME.match(value))
            or bool(_DOTTED_NAME.match(value))
            or value.startswith(("/", "./", "~/", "../"))
            or "://" in value
        )
    )


def token(entropy: Entropy, value: str) -> bool:
    """A provider token: random, so never sequential, repetitive or a documentation value
    (`AKIAIOSFODNN7EXAMPLE`, `ghp_xxxx…`)."""
    return (
        not is_sequential_string(value)
        and len(set(value)) > 6
        and not _placeholder_word(value)
        and entropy(value) >= 3.0
    )


def mixed_case_token(entropy: Entropy, value: str) -> bool:
    """A token whose prefix is short or common (`pa-`, `sk-`, `hf_`): random letters of both cases,
    which kebab-case names (`pa-payments-reconciler-7f9c8d6b5d-x2x9k`) never have."""
    return (
        token(entropy, value)
        and any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and entropy(value) >= 3.5
    )


def bearer(entropy: Entropy, value: str) -> bool:
    """An opaque bearer token: letters and digits (hex ones included), not a word or a variable."""
    if _placeholder(value) or not token(entropy, value) or _WORDS.match(value):
        return False
    has_digit = any(c.isdigit() for c in value)
    mixed_case = any(c.isupper() for c in value) and any(c.islower() for c in value)
    return any(c.isalpha() for c in value) and (has_digit or (mixed_case and len(value) >= 24))


def aws_secret(entropy: Entropy, value: str) -> bool:
    """40 base64 characters of mixed case; a hex run of the same length is a SHA-1."""
    return (
        not _HEX.match(value)
        and any(c.islower() for c in value)
        and any(c.isupper() for c in value)
        and not _placeholder(value, names=False)
        and entropy(value) >= 3.5
    )


def jwt(entropy: Entropy, value: str) -> bool:
    return value.count(".") >= 2 and bool(JwtTokenDetector.is_formally_valid(value))


def url_password(entropy: Entropy, value: str) -> bool:
    """Any password in a URL but the documentation ones (`user:password@`, `:<pass>@`, `:****@`)."""
    return value.lower() not in {"password", "pass", "passwd", "pwd", "secret"} and not _placeholder(
        value, names=False
    )


def password(entropy: Entropy, value: str) -> bool:
    """A `password=`/`password is` value: short ones count, but not words (`is rotated weekly`)."""
    return (
        len(value) >= 6
        and not _placeholder(value)
        and not value.isdigit()
        and _classes(value) >= 2
        and not _WORDS.match(value)
        and not _WORD.match(value)
        and entropy(value) >= 2.5
    )


def secret(entropy: Entropy, value: str) -> bool:
    """An `api_key=`/`token:`/`secret:` value: long and random, unlike names, numbers and paths."""
    if len(value) < 10 or _placeholder(value) or _WORDS.match(value):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    long_random = len(value) >= 24 and entropy(value) >= 4.0
    return has_alpha and (has_digit or long_random) and _classes(value) >= 2 and entropy(value) >= 3.0


def always(entropy: Entropy, value: str) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class Rule:
    """One way a kind of credential shows up.

    `group`: the part of the match that is the secret (the password of a URL, the value of an
    assignment). `triggers`: lowercase substrings one of which the text must hold for the rule to
    run. `anchored`: the pattern starts with one of its triggers, so it is tried only where they
    occur (`str.find`, fast) instead of at every position of the text (a case-insensitive pattern, or
    one starting with an alternation, costs about a millisecond per 4,000 characters that way).
    `tail`: characters the token may continue with past what the pattern matched (detect-secrets'
    patterns match a fixed length; a longer real token must not leave a fragment behind). `bounded`:
    the token must not start or end inside a longer word. `word_start`: only the start is checked
    (before matching, like `bounded`'s start, so `eyJeyJeyJ…` costs one attempt, not one per `eyJ`).
    """

    kind: str
    pattern: re.Pattern[str]
    triggers: tuple[str, ...]
    accept: Accept = always
    group: int | str = 0
    tail: re.Pattern[str] | None = None
    bounded: bool = False
    word_start: bool = False
    anchored: bool = False


# Every repetition is bounded: a match, its tail and the checks on its value cost at most a few
# kilobytes of work, however long a run of token characters the text holds.
MAX_TOKEN = 1024
_TOKEN_CHARS = re.compile(rf"[A-Za-z0-9_\-]{{0,{MAX_TOKEN}}}")
_ALNUM = re.compile(rf"[A-Za-z0-9]{{0,{MAX_TOKEN}}}")
_JWT_CHARS = re.compile(r"[A-Za-z0-9_\-.+/=]{0,16384}")
_URL_CHARS = re.escape(RESERVED_CHARACTERS + SUB_DELIMITER_CHARACTERS)
_ASSIGN = r"""["'\]]{0,2}[ \t]*(?:=>|:=|=|:|[ \t]+is[ \t]+)[ \t]*"""
_VALUE = (
    r"""(?:"(?P<dq>[^"\s]{1,256})"|'(?P<sq>[^'\s]{1,256})'|`(?P<bq>[^`\s]{1,256})`"""
    r"""|(?P<bare>[^\s"'`]{1,256}))"""
)
_PASSWORD_WORDS = r"(?:pass(?:word|wd|phrase)?|pwd)"  # noqa: S105 - keywords, not a password
_KEY_QUALIFIERS = ("api", "access", "secret", "private", "signing", "encryption", "master", "license", "app")
_SECRET_WORDS = (
    r"(?:secret|token|credentials?|apikey|(?:"
    + "|".join(f"(?<={re.escape(word + sep)})" for word in _KEY_QUALIFIERS for sep in ("", "_", "-", " "))
    + r")key)"
)
"""Anchored at the keyword itself: `api_key` is found at its `key`, preceded by `api_`."""
_QUALIFIER = r"(?:[ \t]+(?:for|of|on|in)(?:[ \t]+[\w.\-/]{1,40}){1,4}?(?=[ \t]+is[ \t]|:))?"
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
        lambda entropy, value: not _placeholder(value) and token(entropy, value),
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
    Rule(
        "url-password",
        re.compile(rf"://[^{_URL_CHARS}\s]*:(?P<password>[^{_URL_CHARS}\s]+)@"),
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
    ),
    Rule(
        "password",
        re.compile(_PASSWORD_WORDS + r"(?![A-Za-z0-9_\-])" + _QUALIFIER + _ASSIGN + _VALUE, re.IGNORECASE),
        ("pass", "pwd"),
        password,
        anchored=True,
    ),
    Rule(
        "secret",
        re.compile(_SECRET_WORDS + r"(?![A-Za-z0-9_\-])" + _QUALIFIER + _ASSIGN + _VALUE, re.IGNORECASE),
        ("secret", "token", "credential", "apikey", "key"),
        secret,
        anchored=True,
    ),
)
"""The rules in priority order; every placeholder kind is one of their `kind`s."""

KINDS: tuple[str, ...] = tuple(dict.fromkeys(rule.kind for rule in RULES))

_VALUE_GROUPS = ("dq", "sq", "bq", "bare")
_TRAILING = ".,;:)]}"


def _value_span(match: re.Match[str]) -> tuple[int, int]:
    """Where the value of a keyword assignment is: inside its quotes, or bare without the sentence's
    closing punctuation (`password=Zx9k2mQ4, then …`)."""
    for name in _VALUE_GROUPS:
        if match.group(name) is not None:
            start, end = match.span(name)
            if name == "bare":
                text = match.string
                while end > start and text[end - 1] in _TRAILING:
                    end -= 1
            return start, end
    raise AssertionError("an assignment pattern always captures a value")


_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def _present(seen: dict[str, bool], low: str, trigger: str) -> bool:
    """Whether `trigger` is in `low`, looked up once per scan (rules share triggers)."""
    if trigger not in seen:
        seen[trigger] = trigger in low
    return seen[trigger]


def _occurrences(low: str, triggers: Sequence[str]) -> list[int]:
    """Where any of `triggers` starts in `low`, in order."""
    found: set[int] = set()
    for trigger in triggers:
        at = low.find(trigger)
        while at >= 0:
            found.add(at)
            at = low.find(trigger, at + 1)
    return sorted(found)


def _extent(rule: Rule, match: re.Match[str]) -> tuple[int, int]:
    """Where the secret of `match` is, its tail included; `start == end` when there is none."""
    text = match.string
    if rule.kind in ("password", "secret"):
        start, end = _value_span(match)
    else:
        start, end = match.span(rule.group)
    if start < 0:
        return 0, 0
    if rule.tail is not None:
        tail = rule.tail.match(text, end)
        if tail is not None:
            end = tail.end()
        if rule.kind == "jwt":
            while end > start and text[end - 1] == ".":
                end -= 1
    return start, end


def _candidates(rule: Rule, text: str, low: str, present: dict[str, bool]) -> Iterator[tuple[int, int]]:
    """Where the rule's pattern finds a secret, before its value is judged.

    An anchored rule is tried only where its triggers occur, and not again inside what its previous
    match covered (`ghp_ghp_ghp_…`) nor, for a token that must start a word, after a letter or digit
    (`eyJeyJeyJ…`): without that, a run of repeated triggers costs time quadratic in its length.
    """
    if not rule.anchored:
        if any(_present(present, low, trigger) for trigger in rule.triggers):
            for match in rule.pattern.finditer(text):
                yield _extent(rule, match)
        return
    resume = 0
    check_start = rule.bounded or rule.word_start
    for at in _occurrences(low, rule.triggers):
        if at < resume or (check_start and at > 0 and text[at - 1].isalnum()):
            continue
        anchored = rule.pattern.match(text, at)
        if anchored is not None:
            start, end = _extent(rule, anchored)
            resume = max(anchored.end(), end)
            yield start, end


class Detector:
    """Finds credentials with `rules` (default: all of `RULES`); holds nothing but them, so one
    detector may serve every request."""

    def __init__(self, rules: Sequence[Rule] = RULES) -> None:
        self._rules = tuple(rules)
        self._entropy = Entropy()

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(rule.kind for rule in self._rules))

    def scan(self, text: str) -> list[Span]:
        """Every credential in `text`, in order, never overlapping (the earlier rule wins)."""
        low = text.lower()
        if len(low) != len(text):  # a few non-ASCII letters lower to two characters; keep offsets
            low = text.translate(_ASCII_LOWER)
        present: dict[str, bool] = {}
        # placeholders already in the text (an edit of a redacted memory) are nobody's value
        kept = [Span("", m.start(), m.end()) for m in PLACEHOLDER.finditer(text)] if "[secret:" in low else []
        taken: list[Span] = list(kept)
        for rule in self._rules:
            for start, end in _candidates(rule, text, low, present):
                if start == end or any(start < t.end and t.start < end for t in taken):
                    continue
                if rule.bounded and (
                    (start > 0 and text[start - 1].isalnum()) or (end < len(text) and text[end].isalnum())
                ):
                    continue
                if rule.accept(self._entropy, text[start:end]):
                    taken.append(Span(rule.kind, start, end))
        found = [span for span in taken if span.kind]
        found.sort(key=lambda span: span.start)
        return found
